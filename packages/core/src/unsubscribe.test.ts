import { describe, expect, it } from 'vitest';
import { readUnsubscribeToken, unsubscribeToken } from './unsubscribe';

const SECRET = 'a-secret-of-at-least-thirty-two-characters';
const RULE = '6f1c7a52-3b0e-4c8e-9d2f-1a2b3c4d5e6f';
const MEMBER = '0b9e8d7c-6a5b-4c3d-8e2f-9a8b7c6d5e4f';

describe('unsubscribe tokens', () => {
  it('name their rule and member, URL-safe', () => {
    const token = unsubscribeToken(SECRET, RULE, MEMBER);
    expect(token).toMatch(/^[A-Za-z0-9_-]{64}$/);
    expect(readUnsubscribeToken(SECRET, token)).toEqual({ ruleId: RULE, memberId: MEMBER });
  });

  it('refuse a token of another secret, a changed one and anything else', () => {
    const token = unsubscribeToken(SECRET, RULE, MEMBER);
    expect(readUnsubscribeToken('another-secret-of-thirty-two-characters!', token)).toBeNull();
    const flipped = `${token.slice(0, 10)}${token[10] === 'A' ? 'B' : 'A'}${token.slice(11)}`;
    expect(readUnsubscribeToken(SECRET, flipped)).toBeNull();
    for (const junk of ['', 'x', token.slice(1), `${token}=`, '../'.repeat(30), 'é'.repeat(64)]) expect(readUnsubscribeToken(SECRET, junk)).toBeNull();
  });
});
