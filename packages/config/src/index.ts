export { loadConfig, ConfigError, ROLES, ROLE_ALIASES, type Config, type HostPort, type RedisTarget, type Role } from './config';
