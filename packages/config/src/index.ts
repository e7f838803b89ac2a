export { loadConfig, ConfigError, DEFAULT_INGEST_LINGER_MS, ROLES, ROLE_ALIASES, type Config, type HostPort, type RedisTarget, type Role } from './config';
