import type { TableShape } from '../shape';

/** Partitioned as expected (method and key), and every partition carries the unique index it must have of its own. */
export function comparePartitioning(expected: TableShape, actual: TableShape): string[] {
  const table = expected.name;
  const want = expected.partitioning;
  const have = actual.partitioning;
  if (!want && !have) return [];
  if (!want) return [`table ${table}: database partitions it by ${have!.method} (${have!.columns.join(', ')}), the project does not`];
  if (!have) return [`table ${table}: expected partitioned by ${want.method} (${want.columns.join(', ')}), database has a plain table`];
  const problems: string[] = [];
  if (want.method !== have.method || want.columns.join('\n') !== have.columns.join('\n')) {
    problems.push(`table ${table}: expected partitioned by ${want.method} (${want.columns.join(', ')}), database by ${have.method} (${have.columns.join(', ')})`);
  }
  const unique = want.partitionUnique;
  if (unique) {
    for (const partition of have.partitions) {
      if (!partition.uniqueIndexes.some((columns) => columns.join('\n') === unique.join('\n'))) {
        problems.push(`partition ${partition.name} of ${table}: missing its unique index (${unique.join(', ')})`);
      }
    }
  }
  return problems;
}
