export { buildApp, type BuiltApp } from './app';
export { createDeps, closeDeps, createRedis, type AppDeps } from './deps';
export { organizationJson, memberJson, keyJson } from './routes/admin/routes';
export { announceInvalidation, subscribeToInvalidations as subscribeToKeyInvalidations, KEY_INVALIDATION_CHANNEL } from './plugins/key-cache';
export { bumpRuleListVersion } from './routes/notification-rules/list-cache';
