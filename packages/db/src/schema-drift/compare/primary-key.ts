import type { TableShape } from '../shape';

export function comparePrimaryKeys(expected: TableShape, actual: TableShape): string[] {
  const table = expected.name;
  const expectedKey = expected.primaryKey;
  const actualKey = actual.primaryKey;
  if (!expectedKey && !actualKey) return [];
  if (!expectedKey) return [`table ${table}: database has primary key (${actualKey?.columns.join(', ')}), schema.prisma has none`];
  if (!actualKey) return [`table ${table}: expected primary key (${expectedKey.columns.join(', ')}), database has none`];
  const problems: string[] = [];
  if (expectedKey.columns.join('\n') !== actualKey.columns.join('\n')) {
    problems.push(
      `table ${table}: expected primary key (${expectedKey.columns.join(', ')}), database has (${actualKey.columns.join(', ')})`,
    );
  }
  if (expectedKey.name !== actualKey.name) {
    problems.push(`table ${table}: primary key is named "${actualKey.name}", expected "${expectedKey.name}"`);
  }
  return problems;
}
