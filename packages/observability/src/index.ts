export { createLogger, redactPaths, type Logger } from './logger';
