import { describeIndex } from '../report';
import type { IndexShape, TableShape } from '../shape';

function indexKey(index: IndexShape): string {
  return `${index.unique}:${index.columns.join('\n')}`;
}

/** Matched by columns and uniqueness; names, methods, sort orders and conditions are then checked pairwise. */
export function compareIndexes(expected: TableShape, actual: TableShape): string[] {
  const problems: string[] = [];
  const unmatched = [...actual.indexes];
  for (const index of expected.indexes) {
    const position = unmatched.findIndex((candidate) => indexKey(candidate) === indexKey(index));
    const what = describeIndex(expected.name, index);
    if (position < 0) {
      problems.push(`${what}: missing from the database (expected name "${index.name}")`);
      continue;
    }
    const [actualIndex] = unmatched.splice(position, 1);
    if (!actualIndex) continue;
    if (actualIndex.name !== index.name) {
      problems.push(`${what}: named "${actualIndex.name}" in the database, expected "${index.name}"`);
    }
    if (actualIndex.method !== index.method) {
      problems.push(`${what}: expected method ${index.method}, database has ${actualIndex.method}`);
    }
    if (actualIndex.descending.join() !== index.descending.join()) {
      const order = (descending: boolean[]) => descending.map((desc) => (desc ? 'DESC' : 'ASC')).join(', ');
      problems.push(`${what}: expected order (${order(index.descending)}), database has (${order(actualIndex.descending)})`);
    }
    if (actualIndex.predicate !== index.predicate) {
      problems.push(`${what}: expected condition ${index.predicate ?? 'none'}, database has ${actualIndex.predicate ?? 'none'}`);
    }
  }
  for (const index of unmatched) {
    problems.push(`${describeIndex(expected.name, index)}: exists in the database but not in schema.prisma (named "${index.name}")`);
  }
  return problems;
}
