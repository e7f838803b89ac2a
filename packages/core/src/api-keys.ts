import { createHash, randomInt } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const API_KEY_LENGTH = 32;
const API_KEY_PATTERN = /^[A-Za-z0-9]{32}$/;

/** 32 random alphanumeric characters (~190 bits), drawn without modulo bias. */
export function generateApiKey(): string {
  let key = '';
  for (let i = 0; i < API_KEY_LENGTH; i++) key += ALPHABET[randomInt(ALPHABET.length)];
  return key;
}

/**
 * Keys have enough entropy that a fast hash is safe (no dictionary to attack),
 * and a fast hash lets every request be checked without a slow KDF.
 */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function isWellFormedApiKey(key: string): boolean {
  return API_KEY_PATTERN.test(key);
}

/** What operators see of a key after creation: enough to tell keys apart. */
export function apiKeyPrefix(key: string): string {
  return key.slice(0, 4);
}
