export { loadConfig, ConfigError, ROLES, type Config, type Role } from './config';
