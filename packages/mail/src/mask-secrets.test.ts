import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isHighEntropy, isSecretName, MASK, maskData, maskDataEntries, maskSecret, maskText, maskTextFully, mayHoldSecret } from './mask-secrets';

const GITHUB_TOKEN = 'tok_R8x2Lq9ZtK4mVb7NcW1yHs5PdJ3fGa6EuQ0i';
const AWS_SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';

describe('isSecretName', () => {
  it.each([
    'password', 'Password', 'PASSWORD', 'passwd', 'pwd', 'user_password', 'userPassword', 'user-password', 'userpassword',
    'secret', 'client_secret', 'clientSecret', 'token', 'access_token', 'x-auth-token', 'refreshToken', 'api_key', 'apiKey',
    'API-KEY', 'apikey', 'x_api_key', 'access_key', 'aws_secret_access_key', 'private_key', 'privateKey', 'ssh_key', 'cvv',
    'CVC', 'card_cvv2', 'pin', 'userPIN', 'PINCode', 'hash', 'password_hash', 'passwordHash', 'session', 'session_id',
    'sessionId', 'cookie', 'set-cookie', 'authorization', 'Authorization', 'credential', 'credentials', 'leaked.credentials',
    'card_number', 'cardNumber', 'tokens', 'passwords',
  ])('%s is secret', (name) => expect(isSecretName(name)).toBe(true));

  it.each(['email', 'username', 'user', 'port', 'service', 'url', 'shipping_address', 'spinner', 'key_id', 'domain', 'breach_name', 'source', 'count', 'hashtag_count'])(
    '%s is not',
    (name) => expect(isSecretName(name)).toBe(false),
  );

  it('judges a name the same however often it comes, and after thousands of others (names judged lately are remembered, a bounded few)', () => {
    for (let round = 0; round < 3; round++) {
      expect(isSecretName('userPassword')).toBe(true);
      expect(isSecretName('service')).toBe(false);
      for (let i = 0; i < 1500; i++) expect(isSecretName(`field_${round}_${i}`)).toBe(false);
    }
    // Longer than judged whole (its first 128 characters are): never remembered, judged alike each time.
    const long = `${'x'.repeat(130)}_password`;
    expect(isSecretName(long)).toBe(isSecretName(long));
  });
});

describe('maskSecret', () => {
  it('shows a few characters of each end of a long value, never its length', () => {
    expect(maskSecret('hunter22')).toBe(`hu${MASK}2`);
    expect(maskSecret('correct horse')).toBe(`co${MASK}e`);
    expect(maskSecret(GITHUB_TOKEN)).toBe(`tok_${MASK}0i`);
    expect(maskSecret('a'.repeat(6))).toBe(maskSecret('a'.repeat(15)));
  });

  it('hides short values and all-digit values (PINs, CVVs) entirely', () => {
    for (const value of ['', 'a', 'abc12', '1234', '123456', '987654321012']) expect(maskSecret(value)).toBe(MASK);
  });

  it('keeps the last four digits of a card number, with spaces or dashes', () => {
    expect(maskSecret('4111111111111111')).toBe('•••• 1111');
    expect(maskSecret('4111 1111 1111 1111')).toBe('•••• 1111');
    expect(maskSecret('5500-0000-0000-0004')).toBe('•••• 0004');
  });

  it('masks an e-mail address in a secret field like any other value', () => {
    expect(maskSecret('bob@acme.example')).toBe(`bo${MASK}e`);
  });
});

describe('maskText', () => {
  it('masks card numbers passing Luhn, with spaces or dashes, keeping the last four digits', () => {
    expect(maskText('card 4111 1111 1111 1111 found')).toBe('card •••• 1111 found');
    expect(maskText('card 4111-1111-1111-1111.')).toBe('card •••• 1111.');
    expect(maskText('amex 378282246310005 and visa 4012888888881881')).toBe('amex •••• 0005 and visa •••• 1881');
  });

  it('leaves numbers that are no card alone: failing Luhn, too short, too long, or glued to more text', () => {
    for (const text of ['order 4111 1111 1111 1112', 'phone 555 0100', 'id 41111111111111110000000', 'ref A4111111111111111', 'port 3389']) {
      expect(maskText(text)).toBe(text);
    }
  });

  it("leaves a link's path alone but for a segment that is a token itself", () => {
    for (const url of [
      'https://platform.example.com/findings/b3d1f0e2-9c4a-4a7b-8f1e-2d6c5b4a3f21',
      'https://platform.example.com/findings/evt-1234-15',
      'https://platform.example.com/orgs/acme-industries/assets/host-1234.example.com/findings/98765432101234',
      'see https://platform.example.com/findings/b3d1f0e2-9c4a-4a7b-8f1e-2d6c5b4a3f21 for details',
    ]) expect(maskText(url)).toBe(url);
    expect(maskText('https://hooks.example.com/services/T0A1B2C3D/B4E5F6G7H/aZ3kQ9mW2xL7pR4tN8vY6bC1')).toBe(`https://hooks.example.com/services/T0A1B2C3D/B4E5F6G7H/aZ3k${MASK}C1`);
    expect(maskText('https://platform.example.com/findings/7?api_key=sk_live_51HqLyjWDarjtT1zdp7dc')).toBe(`https://platform.example.com/findings/7?api_key=sk_l${MASK}dc`);
  });

  it('masks long high-entropy words and leaves identifiers, paths, UUIDs and e-mail addresses', () => {
    expect(maskText(`token ${GITHUB_TOKEN} leaked`)).toBe(`token tok_${MASK}0i leaked`);
    expect(maskText(`aws ${AWS_SECRET}`)).toBe(`aws wJal${MASK}EY`);
    expect(maskText('sha 5f4dcc3b5aa765d61d8327deb882cf99')).toBe(`sha 5f4d${MASK}99`);
    for (const text of [
      'internal_reporting_service_v2 is exposed',
      '/var/www/html/wp-config.php',
      'event 3f2b8c1e-9d4a-4e6b-8f7a-0c1d2e3f4a5b',
      'alice.longname@subsidiary-of-acme.example.com',
      'Port 3389 (RDP) open on mail.example.com',
    ]) {
      expect(maskText(text)).toBe(text);
    }
  });

  it('masks the value after a secret name and `=` or `:`, in URLs, JSON and headers', () => {
    expect(maskText('password=hunter2&user=bob')).toBe(`password=hu${MASK}2&user=bob`);
    expect(maskText('https://app.example/reset?token=abc123def&x=1')).toBe(`https://app.example/reset?token=ab${MASK}f&x=1`);
    expect(maskText('{"api_key": "k3y-v4lue", "port": 22}')).toBe(`{"api_key": "k3${MASK}e", "port": 22}`);
    expect(maskText('Authorization: Bearer abc.def.ghi')).toBe(`Authorization: Bearer ab${MASK}i`);
    expect(maskText('PIN: 4821')).toBe(`PIN: ${MASK}`);
    expect(maskText('the password was weak')).toBe('the password was weak');
  });

  it('changes no text its first look lets pass (mayHoldSecret), whatever the text', () => {
    // Pieces that make masking happen or nearly happen: digit runs (cards, Luhn or not), separators,
    // secret names, long token runs, paths, dots, spaces, dashes, quotes, characters beyond ASCII.
    const piece = fc.oneof(
      fc.constantFrom('4111 1111 1111 1111', '4111111111111112', '1234', '5', '-', ' ', '.', '/', '=', ':', '"', 'password', 'token', 'Bearer ', 'é', '•'),
      fc.stringMatching(/^[A-Za-z0-9+/_-]{15,25}$/),
      fc.stringMatching(/^[0-9 -]{10,20}$/),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }).map((pieces) => pieces.join('')), (text) => {
        expect(maskText(text)).toBe(maskTextFully(text));
        if (!mayHoldSecret(text)) expect(maskTextFully(text)).toBe(text);
      }),
      { numRuns: 5000 },
    );
    // At the edges: 12 digits and 19 token characters pass untouched; one more of either is looked at.
    expect(mayHoldSecret('1 2 3 4 5 6 7 8 9 0 1 2')).toBe(false);
    expect(mayHoldSecret('1 2 3 4 5 6 7 8 9 0 1 2 3')).toBe(true);
    expect(mayHoldSecret('aB3dE5gH7jK9mN1pQ2r')).toBe(false);
    expect(mayHoldSecret('aB3dE5gH7jK9mN1pQ2rS')).toBe(true);
    expect(mayHoldSecret('Port 3389 (rdp) open on host12.org3.example.com')).toBe(false);
    expect(mayHoldSecret('pwd=x')).toBe(true);
  });

  it('stays linear on hostile input', () => {
    const inputs = ['1 '.repeat(100_000), 'password='.repeat(50_000), 'a='.repeat(200_000), `x:${' '.repeat(200_000)}`, 'a1'.repeat(200_000), `${'4111 '.repeat(50_000)}`, 'Ab9+/'.repeat(100_000),
      // Long words with no slash after them, after a dot or not: each looked for a path to the text's end.
      'internal_reporting_service_v2 '.repeat(100_000), 'a.internal_reporting_service_v2'.repeat(100_000)];
    for (const input of inputs) {
      const start = performance.now();
      maskText(input);
      // Generous: a quadratic scan of these inputs takes minutes, a linear one milliseconds.
      expect(performance.now() - start).toBeLessThan(2000);
    }
  });
});

describe('isHighEntropy', () => {
  it('needs 20 characters', () => expect(isHighEntropy('aB3dE5gH7jK9mN1pQ')).toBe(false));
});

describe('maskData', () => {
  it('masks every value under a secret-named key, at any depth, in objects and arrays', () => {
    const data = {
      email: 'bob@acme.example',
      password: 'hunter22',
      account: { username: 'bob', credentials: { password: 'S3cr3t!pass', otp_seed: 'JBSWY3DPEHPK3PXP' }, tokens: ['tok-aaaa-1111', 'tok-bbbb-2222'] },
      card: { number: '4111 1111 1111 1111', cvv: '123', expiry: '12/29' },
      history: [{ pwd: 'letmein99' }, { note: 'rotated' }],
      pin: 4821,
    };
    expect(maskData(data)).toEqual({
      email: 'bob@acme.example',
      password: `hu${MASK}2`,
      account: { username: 'bob', credentials: { password: `S3${MASK}s`, otp_seed: `JB${MASK}P` }, tokens: [`to${MASK}1`, `to${MASK}2`] },
      card: { number: '•••• 1111', cvv: MASK, expiry: '12/29' },
      history: [{ pwd: `le${MASK}9` }, { note: 'rotated' }],
      pin: MASK,
    });
  });

  it('masks card numbers given as numbers, and leaves other numbers as numbers', () => {
    expect(maskData({ pan_like: 4111111111111111, port: 443 })).toEqual({ pan_like: '•••• 1111', port: 443 });
  });

  it('copies a __proto__ key as data', () => {
    const copy = maskData(JSON.parse('{"__proto__": {"password": "hunter22"}}')) as Record<string, unknown>;
    expect(JSON.stringify(copy)).toBe(`{"__proto__":{"password":"hu${MASK}2"}}`);
  });

  it('bounds the work on huge or deep data', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 10_000; i++) deep = { a: deep };
    expect(JSON.stringify(maskData(deep))).toContain('…');
    const wide = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, 'v']));
    expect(Object.keys(maskData(wide) as object).length).toBeLessThan(3000);
  });
});

describe('maskDataEntries', () => {
  // What the e-mail's rows were made of before: the entries of maskData's copy of the first ones.
  const throughCopy = (data: object, limit: number) => Object.entries(maskData(Object.fromEntries(Object.entries(data).slice(0, limit))) as object);

  it('gives the entries of maskData\'s copy of the first entries, in its order', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 3000; i++) deep = { a: deep };
    const cases: Array<[object, number]> = [
      [{ port: 443, service: 'https', banner: 'nginx' }, 20],
      [{ password: 'hunter22', nested: { token: 'abc', list: [1, 'tok-aaaa-1111'] }, pan: 4111111111111111 }, 20],
      [JSON.parse('{"__proto__": {"password": "hunter22"}, "b": 1, "10": 2, "2": 3}'), 20],
      // Keys that mask alike (a secret after `=`) become one entry.
      [{ 'password=hunter22': 1, 'password=hunter33': 2, other: 3 }, 20],
      [Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i % 3 ? 'v' : { secret: `s${i}` }])), 20],
      [['first', { pwd: 'letmein99' }], 20],
      [{ deep, after: 'x', last: 'y' }, 20],
      [{ a: 1, b: 2, c: 3 }, 2],
      [{}, 20],
    ];
    for (const [data, limit] of cases) expect(maskDataEntries(data, limit)).toEqual(throughCopy(data, limit));
  });
});
