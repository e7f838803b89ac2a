/**
 * Domain errors. They carry what went wrong in the caller's terms; the HTTP
 * layer maps each to its status and body through the error catalog.
 */

/** One offending input and its messages, e.g. {param: 'name', details: ['This field is required.']}. */
export interface FieldIssue {
  param: string;
  details: string[];
}

export class ValidationFailed extends Error {
  override name = 'ValidationFailed';
  constructor(readonly parameters: FieldIssue[]) {
    super(parameters.map((issue) => `${issue.param}: ${issue.details.join(' ')}`).join('; '));
  }
}

export class NotFound extends Error {
  override name = 'NotFound';
  constructor(readonly details: string) {
    super(details);
  }
}

export class Conflict extends Error {
  override name = 'Conflict';
  constructor(readonly details: string) {
    super(details);
  }
}

/** A limit of the organization's plan is reached (e.g. `max_rules`); `details` says which and what to do. */
export class LimitReached extends Error {
  override name = 'LimitReached';
  constructor(readonly details: string) {
    super(details);
  }
}

/** Merges issues that name the same param, keeping first-seen order. */
export function mergeIssues(issues: readonly FieldIssue[]): FieldIssue[] {
  const byParam = new Map<string, FieldIssue>();
  for (const issue of issues) {
    const existing = byParam.get(issue.param);
    if (existing) existing.details.push(...issue.details.filter((detail) => !existing.details.includes(detail)));
    else byParam.set(issue.param, { param: issue.param, details: [...issue.details] });
  }
  return [...byParam.values()];
}

/**
 * An error and the errors it wraps (`cause`), outermost first, as plain records: libraries wrap
 * the error that says what really happened (a socket's code, a server's answer) in their own.
 */
export function* causeChain(error: unknown, maxDepth = 5): Generator<Record<string, unknown>> {
  let current = error;
  for (let depth = 0; depth < maxDepth && typeof current === 'object' && current !== null; depth++) {
    yield current as Record<string, unknown>;
    current = (current as { cause?: unknown }).cause;
  }
}
