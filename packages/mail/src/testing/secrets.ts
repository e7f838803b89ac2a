import { expect } from 'vitest';

/** What credential and breach findings carry, and no part of any e-mail may show. */
export const LEAKED = {
  password: 'Tr0ub4dor-horse-9',
  token: 'tok_R8x2Lq9ZtK4mVb7NcW1yHs5PdJ3fGa6EuQ0i',
  card: '4111 1111 1111 1111',
  hash: '5f4dcc3b5aa765d61d8327deb882cf99',
  apiKey: 'ak_test_51HxQ2eLkZ8vTq3Rm9Yb',
};

/** Every way the values above might show, whole or in part. */
export const FORBIDDEN = [
  LEAKED.password, 'Tr0ub4dor', LEAKED.token, 'R8x2Lq9Zt', LEAKED.card, '4111111111111111', '4111-1111', '1111 1111 1111',
  LEAKED.hash, 'dcc3b5aa', LEAKED.apiKey, 'HxQ2eLkZ',
];

/** Fails naming the part and the secret it shows. */
export function expectNoSecret(parts: Record<string, string>): void {
  for (const [part, text] of Object.entries(parts)) {
    for (const secret of FORBIDDEN) expect(text, `${part} shows ${secret}`).not.toContain(secret);
  }
}
