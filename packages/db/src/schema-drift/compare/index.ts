import type { DatabaseShape, TableShape } from '../shape';
import { compareColumns } from './columns';
import { compareForeignKeys } from './foreign-keys';
import { compareIndexes } from './indexes';
import { comparePartitioning } from './partitioning';
import { comparePrimaryKeys } from './primary-key';

/**
 * One check per aspect of a table, run in this order on every table both sides have; each
 * returns its problems as report lines. A new aspect is a field on TableShape, filled by both
 * sides, and one more check here.
 */
export type TableCheck = (expected: TableShape, actual: TableShape) => string[];

const TABLE_CHECKS: readonly TableCheck[] = [compareColumns, comparePrimaryKeys, compareIndexes, compareForeignKeys, comparePartitioning];

export function compareShapes(expected: DatabaseShape, actual: DatabaseShape): string[] {
  return [
    ...compareEnums(expected.enums, actual.enums),
    ...compareTableSets(expected, actual),
    ...[...expected.tables.values()].flatMap((table) => {
      const actualTable = actual.tables.get(table.name);
      return actualTable ? compareTable(table, actualTable) : [];
    }),
  ];
}

function compareEnums(expected: Map<string, string[]>, actual: Map<string, string[]>): string[] {
  const problems: string[] = [];
  for (const [name, values] of expected) {
    const actualValues = actual.get(name);
    if (!actualValues) problems.push(`enum ${name}: missing from the database`);
    else if (values.join('\n') !== actualValues.join('\n')) {
      problems.push(`enum ${name}: expected values (${values.join(', ')}), database has (${actualValues.join(', ')})`);
    }
  }
  for (const name of actual.keys()) {
    if (!expected.has(name)) problems.push(`enum ${name}: exists in the database but not in schema.prisma`);
  }
  return problems;
}

function compareTableSets(expected: DatabaseShape, actual: DatabaseShape): string[] {
  return [
    ...[...expected.tables.keys()]
      .filter((name) => !actual.tables.has(name))
      .map((name) => `table ${name}: missing from the database`),
    ...[...actual.tables.keys()]
      .filter((name) => !expected.tables.has(name))
      .map((name) => `table ${name}: exists in the database but not in schema.prisma`),
  ];
}

function compareTable(expected: TableShape, actual: TableShape): string[] {
  return TABLE_CHECKS.flatMap((check) => check(expected, actual));
}
