import type { ColumnDefault, ForeignKeyShape, IndexShape } from './shape';

/**
 * What findSchemaDrift answers, and the words its problems are written in: one line per
 * difference, naming the object as schema.prisma's author knows it (table.column, index
 * table(columns), foreign key table(columns) → table(columns)).
 */
export interface DriftReport {
  problems: string[];
}

export function describeDefault(value: ColumnDefault): string {
  switch (value.kind) {
    case 'none':
      return 'none';
    case 'any':
      return 'dbgenerated()';
    case 'now':
      return 'CURRENT_TIMESTAMP';
    case 'autoincrement':
      return 'autoincrement()';
    case 'expression':
      return value.sql;
    case 'value': {
      const items = value.values.map((literal) => (literal.quoted ? `'${literal.text.replaceAll("'", "''")}'` : literal.text));
      return value.isArray ? `ARRAY[${items.join(', ')}]` : (items[0] ?? '');
    }
  }
}

export function describeIndex(table: string, index: IndexShape): string {
  return `${index.unique ? 'unique index' : 'index'} ${table}(${index.columns.join(', ')})`;
}

export function describeForeignKey(table: string, key: ForeignKeyShape): string {
  return `foreign key ${table}(${key.columns.join(', ')}) → ${key.referencedTable}(${key.referencedColumns.join(', ')})`;
}

export function foreignKeyAction(action: string): string {
  return action.replace(/(?<=[a-z])(?=[A-Z])/g, ' ').toUpperCase();
}
