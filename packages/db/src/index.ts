export { createDatabase, quoteIdent, withTransaction, type Database, type DatabaseOptions } from './client';
export { migrate, readMigrations, MigrationError, MIGRATIONS_DIR, type MigrateOptions } from './migrate';
export * from './organizations';
export * from './members';
export * from './api-keys';
export * from './rules';
export { findSchemaDrift, SCHEMA_PRISMA_PATH, type DriftReport, type FindSchemaDriftOptions } from './schema-drift';
export * from './deliveries';
export * from './assets';
