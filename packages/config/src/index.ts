export { loadConfig, ConfigError, DEFAULT_INGEST_LINGER_MS, FAST_PATH_NAMES, ROLES, type Config, type FastPathName, type HostPort, type RedisTarget, type Role } from './config';
