import { describe, expect, it } from 'vitest';
import { STRATEGY_COST_LIMIT, strategyCost, strategyCostIssue } from './cost';
import type { Condition, Filters } from './types';

const filters = (must: Condition[], should: Condition[] = [], mustNot: Condition[] = []): Filters => ({ must, should, must_not: mustNot });

describe('strategyCost', () => {
  it('charges each condition its passes over the most text its field can hold', () => {
    expect(strategyCost(null)).toBe(0);
    expect(strategyCost(filters([{ name: 'tags', type: 'exists' }]))).toBe(1);
    expect(strategyCost(filters([{ name: 'asset', type: 'eq', value: 'a' }]))).toBe(1 + 1024);
    expect(strategyCost(filters([{ name: 'asset_type', type: 'in', value: ['a', 'b'] }]))).toBe(1 + 64);
    expect(strategyCost(filters([{ name: 'tags', type: 'contains_all', value: ['a'] }]))).toBe(1 + 2 * 12_800);
    expect(strategyCost(filters([{ name: 'data.x', type: 'startswith', value: 'a' }]))).toBe(1 + 16_384);
    // One pass, plus one per run of stars.
    expect(strategyCost(filters([{ name: 'asset', type: 'wildcard', value: '*.example.com' }]))).toBe(1 + 2 * 1024);
    expect(strategyCost(filters([{ name: 'asset', type: 'wildcard', value: 'a**b*c?' }]))).toBe(1 + 3 * 1024);
  });

  it('adds up every clause', () => {
    const one: Condition = { name: 'tags', type: 'eq', value: 'x' };
    expect(strategyCost(filters([one], [one], [one]))).toBe(3 * (1 + 12_800));
  });

  it('names the strategy when over the limit, and only then', () => {
    const tags = (n: number): Condition[] => Array.from({ length: n }, () => ({ name: 'tags', type: 'eq', value: 'x' }));
    expect(strategyCostIssue(filters(tags(15)))).toBeNull();
    expect(strategyCost(filters(tags(16)))).toBeGreaterThan(STRATEGY_COST_LIMIT);
    expect(strategyCostIssue(filters(tags(16)))).toEqual({
      param: 'strategy',
      message: `Ensure this strategy costs no more than 200000 to evaluate (it costs ${16 * 12_801}): use fewer conditions, or fewer "*" in wildcards, on tags and data fields.`,
    });
  });
});
