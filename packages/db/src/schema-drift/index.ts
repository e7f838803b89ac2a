/**
 * `prisma migrate diff --exit-code` without Prisma's schema engine (README.md beside this file):
 *
 *   schema.prisma --getDMMF--> expected DatabaseShape ┐  (prisma-schema.ts)
 *                                                     ├─ compareShapes --> problems (compare/, report.ts)
 *   pg_catalog ------------->  actual DatabaseShape   ┘  (catalog.ts)
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { actualFromDatabase } from './catalog';
import { compareShapes } from './compare';
import { expectedFromDatamodel, readSchemaModel } from './prisma-schema';
import { HISTORY_PARTITION_KEYS, HISTORY_PARTITION_UNIQUE, HISTORY_TABLES } from '../sql/includes/history-partitions';
import type { DriftReport } from './report';

export type { DriftReport } from './report';

export const SCHEMA_PRISMA_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', 'prisma', 'schema.prisma');

export interface FindSchemaDriftOptions {
  url: string;
  /** The PostgreSQL schema the migrations were applied to. */
  schema: string;
  /** A schema file, or a folder of .prisma files; defaults to prisma/schema.prisma. */
  schemaPrismaPath?: string;
}

export async function findSchemaDrift(options: FindSchemaDriftOptions): Promise<DriftReport> {
  const { datamodel, predicates } = await readSchemaModel(options.schemaPrismaPath ?? SCHEMA_PRISMA_PATH);
  const expected = expectedFromDatamodel(datamodel, predicates);
  // Prisma does not model partitions: the partitioned tables are the project's own list.
  for (const name of HISTORY_TABLES) {
    const table = expected.tables.get(name);
    if (table) {
      table.partitioning = { method: 'range', columns: [HISTORY_PARTITION_KEYS[name]], partitionUnique: HISTORY_PARTITION_UNIQUE[name] ?? null, partitions: [] };
    }
  }
  const actual = await actualFromDatabase(options.url, options.schema);
  return { problems: compareShapes(expected, actual) };
}
