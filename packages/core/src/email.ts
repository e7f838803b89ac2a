// Deliberately conservative: addresses end up in SMTP envelopes and headers, so
// nothing that could carry whitespace, CR/LF, quotes or angle brackets gets in.
const EMAIL = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@(?=.{1,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;

export function isValidEmail(value: string): boolean {
  return value.length <= 320 && EMAIL.test(value) && !value.includes('..') && !value.startsWith('.');
}

/** E-mail addresses compare case-insensitively here: stored lower-cased. */
export function normalizeEmail(value: string): string {
  return value.trim().toLowerCase();
}
