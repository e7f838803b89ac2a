export { paramOf, schemaErrorsToIssues, type ParamStyle, type SchemaError, type SchemaErrorOptions } from './schema-errors';
export { Nullable, StringEnum } from './schema-helpers';
export { queryReader } from './query-reader';
