import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger, DestinationStream };

/** Secrets that must never reach a log line, wherever they sit in a logged object. */
export const redactPaths = [
  'apikey',
  'key',
  'token',
  'password',
  'authorization',
  'smtpUrl',
  'adminToken',
  'ingestTokens',
  'metricsToken',
  '*.apikey',
  '*.key',
  '*.token',
  '*.password',
  '*.authorization',
  '*.smtpUrl',
  '*.adminToken',
  '*.ingestTokens',
  '*.metricsToken',
  'req.headers.apikey',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.apikey',
  'headers.authorization',
  'headers.cookie',
  '*.headers.apikey',
  '*.headers.authorization',
  '*.headers.cookie',
];

// scheme://user:password@host: the password goes, the rest stays useful.
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@"']*:)[^\s@/"']+@/gi;

/** `smtp://user:secret@host:587` → `smtp://user:***@host:587`; a URL without a password is returned as it is. */
export function maskUrlPassword(url: string): string {
  return url.replace(URL_CREDENTIALS, '$1***@');
}

export interface LoggerOptions {
  level: string;
  name?: string;
  /** Where lines go (default stdout); tests hand in a stream to read them. */
  destination?: DestinationStream;
}

/**
 * JSON lines with pino. Secrets are removed twice: known fields are redacted by path, and any
 * `scheme://user:password@` in a finished line (a message, an error, a stack) loses its password.
 */
export function createLogger(options: LoggerOptions): Logger {
  const settings = {
    level: options.level,
    name: options.name,
    redact: { paths: redactPaths, censor: '[redacted]' },
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    hooks: { streamWrite: (line: string) => (line.includes('@') ? maskUrlPassword(line) : line) },
  };
  return options.destination ? pino(settings, options.destination) : pino(settings);
}
