import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Unsubscribe tokens (RFC 8058 one-click links): a (rule, member) pair and an HMAC-SHA-256 of it
 * under the service's secret, URL-safe base64. Valid without login, forever (an opt-out link must
 * keep working), unguessable without the secret; nothing is stored.
 */
const MAC_BYTES = 16;
const UUID_HEX = /^[0-9a-f]{32}$/;
/** 16 + 16 + 16 bytes, base64url. */
const TOKEN = /^[A-Za-z0-9_-]{64}$/;

function mac(secret: string, payload: Buffer): Buffer {
  return createHmac('sha256', secret).update('unsubscribe\u0000').update(payload).digest().subarray(0, MAC_BYTES);
}

function uuidBytes(uuid: string): Buffer {
  const hex = uuid.replaceAll('-', '').toLowerCase();
  if (!UUID_HEX.test(hex)) throw new Error(`not a UUID: ${uuid.slice(0, 50)}`);
  return Buffer.from(hex, 'hex');
}

function uuidOf(bytes: Buffer): string {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function unsubscribeToken(secret: string, ruleId: string, memberId: string): string {
  const payload = Buffer.concat([uuidBytes(ruleId), uuidBytes(memberId)]);
  return Buffer.concat([payload, mac(secret, payload)]).toString('base64url');
}

/** The (rule, member) a token names, or null for anything that is not a token this secret signed. */
export function readUnsubscribeToken(secret: string, token: string): { ruleId: string; memberId: string } | null {
  if (typeof token !== 'string' || !TOKEN.test(token)) return null;
  const bytes = Buffer.from(token, 'base64url');
  const payload = bytes.subarray(0, 32);
  const given = bytes.subarray(32);
  if (given.length !== MAC_BYTES || !timingSafeEqual(given, mac(secret, payload))) return null;
  return { ruleId: uuidOf(payload.subarray(0, 16)), memberId: uuidOf(payload.subarray(16)) };
}
