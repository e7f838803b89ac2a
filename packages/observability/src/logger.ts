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

const isSchemeCharacter = (code: number) =>
  (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57) || code === 43 || code === 45 || code === 46;
const isSpace = (code: number) => code <= 32 || code === 0x85 || code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) || code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff;
/** Characters that end a URL's user name (the password may hold `/` and quotes: `smtp://u:pa/ss@host`). */
const endsUser = (code: number) => isSpace(code) || code === 58 || code === 47 || code === 64 || code === 34 || code === 39;
/** JSON escapes that stand for white space or control characters: they end a password as the characters would. */
const SPACE_ESCAPES = new Set(['n', 'r', 't', 'b', 'f', 'u']);

/**
 * Masks the password of every `scheme://user:password@` in `text`. Written as one forward scan,
 * not a regular expression: it runs on log lines that carry what clients send (the URL of the
 * "incoming request" line, before authentication), and the former pattern backtracked
 * quadratically on `a.a.a.…@`, so one long query cost a request's worth of CPU many times over
 * (measured: see commit 5571558). Each character is looked at a bounded number of times.
 *
 * The password runs to the first `@` and may hold `/`, `"` and `'` (an invalid URL, but one an
 * operator may write); white space ends it without a mask. In a JSON line (`json`), a bare `"`
 * ends the string and so the password, `\"` and `\\` are part of it, and `\n`, `\t`, … end it.
 */
function maskPasswords(text: string, json: boolean): string {
  let out = '';
  let copied = 0;
  let from = 0;
  for (;;) {
    const separator = text.indexOf('://', from);
    if (separator < 0) break;
    from = separator + 3;
    if (separator === 0 || !isSchemeCharacter(text.charCodeAt(separator - 1))) continue;
    let i = from;
    while (i < text.length && !endsUser(text.charCodeAt(i))) i++;
    if (text.charCodeAt(i) !== 58) {
      from = Math.max(from, i);
      continue;
    }
    const passwordStart = i + 1;
    let end = -1;
    for (i = passwordStart; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (code === 64) {
        end = i;
        break;
      }
      if (isSpace(code)) break;
      if (json && code === 34) break;
      if (json && code === 92) {
        if (SPACE_ESCAPES.has(text[i + 1] ?? '')) break;
        i++;
      }
    }
    // No `@` up to `i`: no later `://` before `i` can find one either, so the scan goes on from there.
    if (end < 0) {
      from = Math.max(from, i);
      continue;
    }
    if (end > passwordStart) {
      out += `${text.slice(copied, passwordStart)}***`;
      copied = end;
    }
    from = end + 1;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/** `smtp://user:secret@host:587` → `smtp://user:***@host:587`; a URL without a password is returned as it is. */
export function maskUrlPassword(url: string): string {
  return maskPasswords(url, false);
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
    hooks: { streamWrite: (line: string) => (line.includes('@') ? maskPasswords(line, true) : line) },
  };
  return options.destination ? pino(settings, options.destination) : pino(settings);
}
