import { describeDefault } from '../report';
import type { ColumnDefault, TableShape } from '../shape';

export function compareColumns(expected: TableShape, actual: TableShape): string[] {
  const problems: string[] = [];
  for (const column of expected.columns.values()) {
    const where = `${expected.name}.${column.name}`;
    const actualColumn = actual.columns.get(column.name);
    if (!actualColumn) {
      problems.push(`${where}: column missing from the database`);
      continue;
    }
    if (column.type !== actualColumn.type) {
      problems.push(`${where}: expected ${column.type}, database has ${actualColumn.type}`);
    }
    if (column.nullable !== actualColumn.nullable) {
      problems.push(
        column.nullable
          ? `${where}: expected nullable, database has NOT NULL`
          : `${where}: expected NOT NULL, database has nullable`,
      );
    }
    if (!defaultsMatch(column.default, actualColumn.default, column.type)) {
      problems.push(
        `${where}: expected default ${describeDefault(column.default)}, database has ${describeDefault(actualColumn.default)}`,
      );
    }
  }
  for (const name of actual.columns.keys()) {
    if (!expected.columns.has(name)) {
      problems.push(`${expected.name}.${name}: column exists in the database but not in schema.prisma`);
    }
  }
  return problems;
}

function defaultsMatch(expected: ColumnDefault, actual: ColumnDefault, type: string): boolean {
  if (expected.kind === 'any') return actual.kind !== 'none';
  if (expected.kind !== actual.kind) return false;
  if (expected.kind === 'expression' && actual.kind === 'expression') {
    return normalizeSql(expected.sql) === normalizeSql(actual.sql);
  }
  if (expected.kind !== 'value' || actual.kind !== 'value') return true;
  return (
    expected.isArray === actual.isArray &&
    expected.values.length === actual.values.length &&
    expected.values.every((value, index) => literalsMatch(value.text, actual.values[index]?.text ?? '', type))
  );
}

/** Compares by meaning for the column's type: 1.5 = 1.50, -1 = '-1'::integer, equal JSON, equal instants. */
function literalsMatch(expected: string, actual: string, type: string): boolean {
  if (expected === actual) return true;
  const baseType = type.replace(/(\[\])+$/, '');
  if (/^(smallint|integer|bigint|real|double precision|numeric|money|oid)\b/.test(baseType)) {
    return Number(expected) === Number(actual) && !Number.isNaN(Number(expected));
  }
  if (/^jsonb?$/.test(baseType)) return canonicalJson(expected) === canonicalJson(actual);
  if (/^(timestamp|date)\b/.test(baseType)) {
    const [left, right] = [parseInstant(expected), parseInstant(actual)];
    return !Number.isNaN(left) && left === right;
  }
  return false;
}

function canonicalJson(text: string): string | undefined {
  const sortKeys = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(sortKeys)
      : value !== null && typeof value === 'object'
        ? Object.fromEntries(
            Object.entries(value)
              .sort(([left], [right]) => (left < right ? -1 : 1))
              .map(([key, item]) => [key, sortKeys(item)]),
          )
        : value;
  try {
    return JSON.stringify(sortKeys(JSON.parse(text)));
  } catch {
    return undefined;
  }
}

/** Milliseconds since the epoch for both ISO 8601 and PostgreSQL's `2020-01-01 00:00:00+00`. */
function parseInstant(text: string): number {
  const iso = text
    .trim()
    .replace(' ', 'T')
    .replace(/([+-]\d{2})$/, '$1:00');
  return Date.parse(/(?:Z|[+-]\d{2}:\d{2})$/i.test(iso) || !iso.includes('T') ? iso : `${iso}Z`);
}

function normalizeSql(sql: string): string {
  return sql.replace(/\s+/g, ' ').trim().toLowerCase();
}
