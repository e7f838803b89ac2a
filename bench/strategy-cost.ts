// `npm run bench:strategy-cost`: what one rule's strategy costs per event, before and after the
// cost budget (packages/core/src/conditions/cost.ts).
//
// "Before" is the case of issue 15: 150 wildcard conditions of 1,024 characters against an event
// with 100 tags, which validation used to take. "After" is the costliest strategy of several
// shapes that the budget still lets through, each against the largest event ingest accepts for
// its field (100 tags of 128 characters, a 16 KiB `data` value, a 1,024-character asset), all
// text chosen so that nothing matches early. Same process, same run; figures go to
// bench/results/strategy-cost.json (this run's only; BENCH_RESULTS=<file> elsewhere) and to stdout.
import os from 'node:os';
import { compileFilters, STRATEGY_COST_LIMIT, strategyCost, validateFilters, type Condition, type MatchableEvent } from '@notify/core';
import { describeMachine } from './support/report';
import { resultsFile, revision, writeResults } from './support/results';

const RESULTS_FILE = resultsFile('strategy-cost');
const loadBefore = os.loadavg();

/** Every condition must be evaluated: must holds nothing, must_not is where they all go (none holds). */
function strategyOf(conditions: Condition[]) {
  const result = validateFilters({ must_not: conditions.slice(0, 50), should: conditions.slice(50, 100), must: [] });
  if (!result.ok) throw new Error(JSON.stringify(result.issues[0]));
  // The remaining conditions (the old case has 150) go into `should`'s sibling clauses as the API allowed.
  const rest = conditions.slice(100);
  return { ...result.value, must_not: [...result.value.must_not, ...rest] };
}

function msPerEvent(conditions: Condition[], event: MatchableEvent): number {
  const predicate = compileFilters(strategyOf(conditions));
  for (let i = 0; i < 5; i++) predicate(event);
  let runs = 0;
  const started = performance.now();
  while (performance.now() - started < 1000 || runs < 5) {
    predicate(event);
    runs++;
  }
  return (performance.now() - started) / runs;
}

const tagsEvent: MatchableEvent = { asset: 'a.example.com', tags: Array.from({ length: 100 }, (_, i) => `${'a'.repeat(120)}-${String(i).padStart(7, '0')}`) };
const issueEvent: MatchableEvent = { asset: 'a.example.com', tags: Array.from({ length: 100 }, (_, i) => `production-web-${i}`) };
const dataEvent: MatchableEvent = { asset: 'a.example.com', data: { x: 'a'.repeat(16_000) } };
const assetEvent: MatchableEvent = { asset: 'a'.repeat(1024) };

const repeat = (n: number, condition: Condition) => Array.from({ length: n }, () => condition);
const fitting = (condition: Condition) => Math.floor(STRATEGY_COST_LIMIT / strategyCost({ must: [condition], should: [], must_not: [] }));

const before = {
  name: '150 wildcards of 1,024 characters on tags, event with 100 tags (issue 15)',
  conditions: repeat(150, { name: 'tags', type: 'wildcard', value: `*${'a*'.repeat(511)}b` }),
  event: issueEvent,
};
const shapes: Array<{ name: string; condition: Condition; event: MatchableEvent }> = [
  { name: 'eq on tags', condition: { name: 'tags', type: 'eq', value: 'a'.repeat(1024) }, event: tagsEvent },
  { name: 'endswith on tags', condition: { name: 'tags', type: 'endswith', value: 'b'.repeat(1024) }, event: tagsEvent },
  { name: 'in (100 values) on tags', condition: { name: 'tags', type: 'in', value: Array.from({ length: 100 }, (_, i) => `${'a'.repeat(1000)}${i}`) }, event: tagsEvent },
  { name: 'contains_all (100 values) on tags', condition: { name: 'tags', type: 'contains_all', value: Array.from({ length: 100 }, (_, i) => `x${i}`) }, event: tagsEvent },
  { name: 'wildcard *a*…*b (3 stars) on tags', condition: { name: 'tags', type: 'wildcard', value: '*a*a*b' }, event: tagsEvent },
  { name: 'wildcard *a*…*b (14 stars) on tags', condition: { name: 'tags', type: 'wildcard', value: `*${'a*'.repeat(13)}b` }, event: tagsEvent },
  { name: 'eq on data (16 KB)', condition: { name: 'data.x', type: 'eq', value: 'a'.repeat(1024) }, event: dataEvent },
  { name: 'wildcard *a*a*b on data (16 KB)', condition: { name: 'data.x', type: 'wildcard', value: '*a*a*b' }, event: dataEvent },
  { name: 'wildcard *a*…*b (11 stars) on data (16 KB)', condition: { name: 'data.x', type: 'wildcard', value: `*${'a*'.repeat(10)}b` }, event: dataEvent },
  { name: 'wildcard *a*…*b (150 stars) on asset', condition: { name: 'asset', type: 'wildcard', value: `*${'a*'.repeat(149)}b` }, event: assetEvent },
  { name: 'eq on asset', condition: { name: 'asset', type: 'eq', value: `${'a'.repeat(1023)}b` }, event: assetEvent },
];

const beforeMs = msPerEvent(before.conditions, before.event);
const after = shapes
  .map(({ name, condition, event }) => {
    const count = Math.min(150, fitting(condition));
    const conditions = repeat(count, condition);
    return { name: `${count} × ${name}`, cost: strategyCost(strategyOf(conditions)), ms_per_event: round(msPerEvent(conditions, event)) };
  })
  .sort((a, b) => b.ms_per_event - a.ms_per_event);

function round(value: number) {
  return Math.round(value * 1000) / 1000;
}

const result = {
  date: new Date().toISOString(),
  ...revision(),
  machine: describeMachine(loadBefore),
  limit: STRATEGY_COST_LIMIT,
  before: { name: before.name, cost: strategyCost(strategyOf(before.conditions)), ms_per_event: round(beforeMs), refused_now: strategyCost(strategyOf(before.conditions)) > STRATEGY_COST_LIMIT },
  worst_allowed: after[0],
  allowed: after,
};
console.log(JSON.stringify(result, null, 2));
await writeResults(RESULTS_FILE, result);
console.log(`written to ${RESULTS_FILE}`);
