import { pino, type Logger } from 'pino';

export type { Logger };

/** Secrets that must never reach a log line, wherever they sit in a logged object. */
export const redactPaths = [
  'apikey',
  'key',
  'token',
  'password',
  'authorization',
  '*.apikey',
  '*.key',
  '*.token',
  '*.password',
  '*.authorization',
  'req.headers.apikey',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.apikey',
  'headers.authorization',
];

export function createLogger(options: { level: string; name?: string }): Logger {
  return pino({
    level: options.level,
    name: options.name,
    redact: { paths: redactPaths, censor: '[redacted]' },
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}
