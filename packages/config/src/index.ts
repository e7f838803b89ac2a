export { loadConfig, ConfigError, type Config } from './config';
