export { loadConfig, ConfigError, ROLES, ROLE_ALIASES, type Config, type Role } from './config';
