import { ValidationFailed, type FieldIssue } from '../errors';
import { queryReader } from '../validation/query-reader';
import type { RawQuery } from './list-query';

/** Bounds of a preview's `days`: how far back the stored events it replays go. */
export const PREVIEW_DAYS = { min: 1, max: 90, default: 30 } as const;

/** Parses a rule preview's query (`days`); throws ValidationFailed. */
export function parsePreviewQuery(raw: RawQuery): { days: number } {
  const issues: FieldIssue[] = [];
  const { integer } = queryReader(raw, issues);
  const days = integer('days', PREVIEW_DAYS.default, PREVIEW_DAYS.min, PREVIEW_DAYS.max);
  if (issues.length) throw new ValidationFailed(issues);
  return { days };
}
