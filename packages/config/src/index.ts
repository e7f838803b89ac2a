export { loadConfig, ConfigError, DEFAULT_INGEST_LINGER_MS, ROLES, type Config, type HostPort, type RedisTarget, type Role } from './config';
