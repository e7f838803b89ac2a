import { compileFilters } from './compile';
import type { Condition, Filters, MatchableEvent } from './types';
import { validateFilters } from './validate';

/** Compiles filters that must first pass validation, so tests cannot rely on input the API would refuse. */
export function predicate(filters: Partial<Record<keyof Filters, Condition[]>>) {
  const result = validateFilters(filters);
  if (!result.ok) throw new Error(`invalid test filters: ${JSON.stringify(result.issues)}`);
  return compileFilters(result.value);
}

export function holds(condition: Condition, event: MatchableEvent): boolean {
  return predicate({ must: [condition] })(event);
}

export const EVENT: MatchableEvent = {
  asset: 'www.Example.com',
  asset_type: 'domain',
  severity: 'high',
  tags: ['Production', 'web'],
  data: { port: 3389, service: 'RDP', open: true, cves: ['CVE-2024-1', 'CVE-2024-2'], seen: '2024-05-01T10:00:00Z' },
};
