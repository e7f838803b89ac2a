export { buildApp, type BuiltApp } from './app';
export { createDeps, closeDeps, ingestSettings, type AppDeps } from './deps';
