import { describeForeignKey, foreignKeyAction } from '../report';
import type { TableShape } from '../shape';

/** Matched by columns and referenced columns; the referential actions are then checked pairwise. */
export function compareForeignKeys(expected: TableShape, actual: TableShape): string[] {
  const problems: string[] = [];
  const unmatched = [...actual.foreignKeys];
  for (const key of expected.foreignKeys) {
    const what = describeForeignKey(expected.name, key);
    const position = unmatched.findIndex((candidate) => describeForeignKey(expected.name, candidate) === what);
    if (position < 0) {
      problems.push(`${what}: missing from the database`);
      continue;
    }
    const [actualKey] = unmatched.splice(position, 1);
    if (!actualKey) continue;
    if (actualKey.onDelete !== key.onDelete) {
      problems.push(
        `${what}: expected ON DELETE ${foreignKeyAction(key.onDelete)}, database has ON DELETE ${foreignKeyAction(actualKey.onDelete)}`,
      );
    }
    if (actualKey.onUpdate !== key.onUpdate) {
      problems.push(
        `${what}: expected ON UPDATE ${foreignKeyAction(key.onUpdate)}, database has ON UPDATE ${foreignKeyAction(actualKey.onUpdate)}`,
      );
    }
  }
  for (const key of unmatched) {
    problems.push(`${describeForeignKey(expected.name, key)}: exists in the database but not in schema.prisma`);
  }
  return problems;
}
