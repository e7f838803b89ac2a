export { buildApp, type BuiltApp } from './app';
export { createDeps, closeDeps, type AppDeps } from './deps';
