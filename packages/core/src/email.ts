// Deliberately conservative: addresses end up in SMTP envelopes and headers, so
// nothing that could carry whitespace, CR/LF, quotes or angle brackets gets in.
const EMAIL = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@(?=.{1,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;

// SMTP carries a path of at most 256 octets with its angle brackets (RFC 5321 4.5.3.1.3): a longer
// address (up to 320 passed before) could be stored and then never delivered.
const MAX_EMAIL_LENGTH = 254;

export function isValidEmail(value: string): boolean {
  return value.length <= MAX_EMAIL_LENGTH && EMAIL.test(value) && !value.includes('..') && !value.startsWith('.');
}

/** E-mail addresses compare case-insensitively here: stored lower-cased. */
export function normalizeEmail(value: string): string {
  return value.trim().toLowerCase();
}
