import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findReferral, parseWhoisServer, WhoisClient, WhoisError } from '../../apps/api/src/whois/client';
import { startTestApp, type TestApp, type TestOrg } from '../support/app';
import { freePort } from '../support/ports';
import { ianaAnswer, markmonitorAnswer, verisignAnswer, verisignNoMatch } from '../support/whois-records';
import { redisKeys } from '@notify/queues';

const WHOIS = '/v1/lookup/whois';
const DOCS = 'https://docs.example.test/notification-rules';
const LOOKUP_PLAN = { groups: ['lookup'] };

/** What a loopback server does with a query: answer it, never answer, or drip bytes forever. */
type Behaviour = string | 'silent' | 'drip';

interface LoopbackWhois {
  port: number;
  address: string;
  /** Every query received, without its CRLF. */
  queries: string[];
  close(): Promise<void>;
}

/**
 * A WHOIS server (RFC 3912) on a loopback address: reads one line, answers and closes. Referrals
 * are only followed to port 43 and the configured server's port, so the servers of one chain
 * share a port on different loopback addresses (Linux routes all of 127.0.0.0/8 to lo).
 */
async function whoisServer(answer: (query: string) => Behaviour, at: { host?: string; port?: number } = {}): Promise<LoopbackWhois> {
  const queries: string[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let buffer = '';
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      const end = buffer.indexOf('\r\n');
      if (end < 0) return;
      const query = buffer.slice(0, end);
      buffer = '';
      queries.push(query);
      const behaviour = answer(query);
      if (behaviour === 'silent') return;
      if (behaviour === 'drip') {
        const timer = setInterval(() => socket.write('%'), 20);
        timers.add(timer);
        socket.on('close', () => clearInterval(timer));
        return;
      }
      socket.end(behaviour);
    });
  });
  const host = at.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(at.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    address: `${host}:${port}`,
    queries,
    async close() {
      for (const timer of timers) clearInterval(timer);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('GET /v1/lookup/whois', () => {
  let registrar: LoopbackWhois;
  let registry: LoopbackWhois;
  let directory: LoopbackWhois;
  let silent: LoopbackWhois;
  let t: TestApp;
  let org: TestOrg;

  const lookup = (domain: string | undefined, key = org.key, app = t) =>
    app.api(key, 'GET', domain === undefined ? WHOIS : `${WHOIS}?domain=${encodeURIComponent(domain)}`);

  beforeAll(async () => {
    directory = await whoisServer(() => ianaAnswer(registry.address));
    const port = directory.port;
    registrar = await whoisServer((query) => markmonitorAnswer(query), { host: '127.0.0.2', port });
    silent = await whoisServer(() => 'silent', { host: '127.0.0.3', port });
    registry = await whoisServer((query) => {
      if (query.startsWith('nope')) return verisignNoMatch(query);
      // slow-registrar.com: the registrar never answers.
      if (query.startsWith('slow-registrar')) return verisignAnswer(query, silent.address);
      return verisignAnswer(query, registrar.address);
    }, { host: '127.0.0.4', port });
    // Every server of this chain is on loopback: an air-gapped mirror, as far as the service can tell.
    t = await startTestApp({ WHOIS_SERVER: directory.address, WHOIS_TIMEOUT_MS: '1000', WHOIS_ALLOW_PRIVATE: 'true' });
    org = await t.createOrg({ plan: LOOKUP_PLAN });
  });
  afterAll(async () => {
    await t.close();
    await Promise.all([registrar, registry, directory, silent].map((server) => server.close()));
  });

  it('follows the directory to the registry and the registry to the registrar', async () => {
    const response = await lookup('google.com');
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json();
    expect(Object.keys(body).sort()).toEqual(['check_date', 'domain_name', 'parsed', 'raw']);
    expect(body.domain_name).toBe('google.com');
    expect(Date.now() - Date.parse(body.check_date)).toBeLessThan(10_000);
    // Each server was asked once, with the domain and CRLF; the registrar naming itself was not followed.
    expect(directory.queries).toEqual(['google.com']);
    expect(registry.queries).toEqual(['google.com']);
    expect(registrar.queries).toEqual(['google.com']);
    // raw: the registry's answer, then the registrar's; the directory's answer is about the TLD and is left out.
    expect(body.raw).toBe(`${verisignAnswer('google.com', registrar.address)}\n${markmonitorAnswer('google.com')}`);
    expect(body.raw).not.toContain('% IANA WHOIS server');
    expect(body.parsed).toEqual({
      domain_name: 'google.com',
      registrar: 'MarkMonitor Inc.',
      registrar_url: 'http://www.markmonitor.com',
      creation_date: '1997-09-15T04:00:00.000Z',
      updated_date: '2019-09-09T15:39:04.000Z',
      expiration_date: '2028-09-14T04:00:00.000Z',
      name_servers: ['ns1.google.com', 'ns2.google.com', 'ns3.google.com', 'ns4.google.com'],
      status: ['clientDeleteProhibited', 'clientTransferProhibited', 'clientUpdateProhibited', 'serverDeleteProhibited'],
      dnssec: 'unsigned',
      registrant: {
        name: 'REDACTED FOR PRIVACY',
        organization: 'Google LLC',
        street: 'REDACTED FOR PRIVACY',
        city: 'REDACTED FOR PRIVACY',
        state_province: 'CA',
        postal_code: 'REDACTED FOR PRIVACY',
        country: 'US',
        email: 'Select Request Email Form at https://domains.markmonitor.com/whois/google.com',
        phone: 'REDACTED FOR PRIVACY',
      },
    });
  });

  it('answers from the cache without asking the servers again', async () => {
    const first = await lookup('cached.com');
    expect(first.statusCode).toBe(200);
    const asked = [directory.queries.length, registry.queries.length, registrar.queries.length];
    const second = await lookup('CACHED.com.');
    expect(second.statusCode).toBe(200);
    expect(second.json()).toEqual(first.json());
    expect([directory.queries.length, registry.queries.length, registrar.queries.length]).toEqual(asked);
    // The cache is keyed by the domain as normalized: a subdomain is its registrable domain.
    expect((await lookup('www.cached.com')).json().check_date).toBe(first.json().check_date);
    expect(registry.queries.filter((query) => query === 'cached.com')).toHaveLength(1);
  });

  it('looks up the registrable domain of a subdomain, and internationalized names in ASCII', async () => {
    const sub = await lookup('www.mail.Example.COM');
    expect(sub.statusCode).toBe(200);
    expect(sub.json().domain_name).toBe('example.com');
    expect(registry.queries).toContain('example.com');
    const idn = await lookup('Bücher.com');
    expect(idn.statusCode).toBe(200);
    expect(idn.json()).toMatchObject({ domain_name: 'xn--bcher-kva.com', parsed: { domain_name: 'xn--bcher-kva.com' } });
    expect(registry.queries).toContain('xn--bcher-kva.com');
  });

  it('answers a name nobody registered with its raw answer and parsed null', async () => {
    const response = await lookup('nope-unregistered.com');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ domain_name: 'nope-unregistered.com', parsed: null });
    expect(response.json().raw).toContain('No match for "NOPE-UNREGISTERED.COM".');
  });

  it('returns the registry answer when the registrar does not answer in time, and does not cache it', async () => {
    const started = Date.now();
    const response = await lookup('slow-registrar.com');
    expect(response.statusCode, response.body).toBe(200);
    expect(Date.now() - started).toBeLessThan(5000);
    const body = response.json();
    expect(body.raw).toBe(verisignAnswer('slow-registrar.com', silent.address));
    expect(body.parsed).toMatchObject({ domain_name: 'slow-registrar.com', registrar: 'MarkMonitor Inc.', registrant: null });
    expect(silent.queries).toContain('slow-registrar.com');
    const asked = registry.queries.length;
    expect((await lookup('slow-registrar.com')).statusCode).toBe(200);
    expect(registry.queries.length).toBe(asked + 1);
  });

  it('by default follows no referral into private address space (WHOIS_ALLOW_PRIVATE=false)', async () => {
    const strict = await startTestApp({ WHOIS_SERVER: directory.address, WHOIS_TIMEOUT_MS: '1000' }, { db: t.db });
    try {
      const strictOrg = await strict.createOrg({ plan: LOOKUP_PLAN });
      const asked = registry.queries.length;
      const response = await lookup('strict.com', strictOrg.key, strict);
      // The directory (configured) was asked; its referral to the registry on loopback was refused.
      expect(response.statusCode).toBe(502);
      expect(response.json().code).toBe(10502);
      expect(directory.queries).toContain('strict.com');
      expect(registry.queries.length).toBe(asked);
    } finally {
      await strict.close();
    }
  });

  it.each([
    ['192.0.2.1', 'Enter a domain name, not an IP address.'],
    ['2001:db8::1', 'Enter a domain name, not an IP address.'],
    ['[2001:db8::1]', 'Enter a domain name, not an IP address.'],
    ['not a domain', 'Enter a valid domain name.'],
    ['localhost', 'Enter a valid domain name.'],
    ['https://example.com/', 'Enter a valid domain name.'],
    ['exa_mple.com', 'Enter a valid domain name.'],
    ['co.uk', '"co.uk" is a public suffix, not a registrable domain name.'],
    ['', 'This field may not be blank.'],
  ])('refuses %j with a 400 on domain', async (domain, message) => {
    const asked = directory.queries.length;
    const response = await lookup(domain);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ code: 10400, details: null, parameters: [{ param: 'domain', details: [message] }], solution: DOCS });
    expect(directory.queries.length).toBe(asked);
  });

  it('requires the domain parameter', async () => {
    const response = await lookup(undefined);
    expect(response.statusCode).toBe(400);
    expect(response.json().parameters).toEqual([{ param: 'domain', details: ['This field is required.'] }]);
  });

  it('answers 403 when the plan lacks the lookup group, 401 without a key', async () => {
    const platformOnly = await t.createOrg();
    const easmOnly = await t.createOrg({ plan: { groups: ['easm'] } });
    for (const key of [platformOnly.key, easmOnly.key]) {
      const response = await lookup('google.com', key);
      expect(response.statusCode).toBe(403);
      expect(response.json()).toEqual({ message: 'You cannot consume this service', request_id: response.headers['service-request-id'] });
    }
    const anonymous = await t.app.inject({ method: 'GET', url: `${WHOIS}?domain=google.com` });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json().message).toBe('No API key found in request');
  });

  it('counts every call against the monthly quota, cached answers included', async () => {
    const small = await t.createOrg({ plan: { ...LOOKUP_PLAN, monthly_quota: 2 } });
    const asked = registry.queries.length;
    const first = await lookup('quota-test.com', small.key);
    expect(first.statusCode).toBe(200);
    expect(first.headers['x-ratelimit-remaining-month']).toBe('1');
    const second = await lookup('quota-test.com', small.key);
    expect(second.statusCode).toBe(200);
    expect(second.headers['x-ratelimit-remaining-month']).toBe('0');
    // The second answer came from the cache: the registry was asked once.
    expect(registry.queries.length).toBe(asked + 1);
    const third = await lookup('quota-test.com', small.key);
    expect(third.statusCode).toBe(429);
    expect(third.json()).toEqual({ message: 'API quota exceeded', request_id: third.headers['service-request-id'] });
    expect(Number(third.headers['retry-after'])).toBeGreaterThan(0);
    expect(registry.queries.length).toBe(asked + 1);
    // The quota is per key: another organization's key still works.
    expect((await lookup('quota-test.com')).statusCode).toBe(200);
  });

  it('is in the OpenAPI document with its parameter, answer and upstream errors', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const operation = doc.paths[WHOIS].get;
    expect(operation.parameters).toEqual([expect.objectContaining({ name: 'domain', in: 'query', required: true })]);
    expect(Object.keys(operation.responses).sort()).toEqual(['200', '400', '401', '403', '429', '502', '504']);
    const answer = operation.responses['200'].content['application/json'].schema;
    expect(Object.keys(answer.properties).sort()).toEqual(['check_date', 'domain_name', 'parsed', 'raw']);
    expect(Object.keys(answer.properties.parsed.properties)).toEqual(
      expect.arrayContaining(['registrar', 'creation_date', 'updated_date', 'expiration_date', 'name_servers', 'status', 'registrant']),
    );
    expect(doc.info.description).toContain('10502');
    expect(doc.info.description).toContain('10504');
  });

  describe('when the WHOIS server fails', () => {
    let drip: LoopbackWhois;
    let empty: LoopbackWhois;
    let silentApp: TestApp;
    let dripApp: TestApp;
    let refusedApp: TestApp;
    let emptyApp: TestApp;
    let silentOrg: TestOrg;

    beforeAll(async () => {
      drip = await whoisServer(() => 'drip');
      empty = await whoisServer(() => '');
      const options = { db: t.db };
      silentApp = await startTestApp({ WHOIS_SERVER: silent.address, WHOIS_TIMEOUT_MS: '300' }, options);
      dripApp = await startTestApp({ WHOIS_SERVER: drip.address, WHOIS_TIMEOUT_MS: '300' }, options);
      refusedApp = await startTestApp({ WHOIS_SERVER: `127.0.0.1:${await freePort()}` }, options);
      emptyApp = await startTestApp({ WHOIS_SERVER: empty.address }, options);
      silentOrg = await silentApp.createOrg({ plan: LOOKUP_PLAN });
    });
    afterAll(async () => {
      await Promise.all([silentApp, dripApp, refusedApp, emptyApp].map((app) => app.close()));
      await Promise.all([drip.close(), empty.close()]);
    });

    it('answers 504 when it does not answer within WHOIS_TIMEOUT_MS', async () => {
      const started = Date.now();
      const response = await lookup('google.com', silentOrg.key, silentApp);
      const elapsed = Date.now() - started;
      expect(response.statusCode).toBe(504);
      expect(response.json()).toEqual({ code: 10504, details: 'The WHOIS server did not answer in time.', parameters: [], solution: DOCS });
      expect(elapsed).toBeGreaterThanOrEqual(250);
      expect(elapsed).toBeLessThan(3000);
    });

    it('answers 504 when it keeps sending past the deadline', async () => {
      const response = await lookup('google.com', silentOrg.key, dripApp);
      expect(response.statusCode).toBe(504);
      expect(response.json().code).toBe(10504);
    });

    it('answers 502 when it refuses the connection or closes without an answer', async () => {
      for (const app of [refusedApp, emptyApp]) {
        const response = await lookup('google.com', silentOrg.key, app);
        expect(response.statusCode).toBe(502);
        expect(response.json()).toEqual({ code: 10502, details: 'The WHOIS server could not be reached.', parameters: [], solution: DOCS });
      }
    });

    it('a failed lookup still counts against the quota and is not cached', async () => {
      const small = await silentApp.createOrg({ plan: { ...LOOKUP_PLAN, monthly_quota: 1 } });
      expect((await lookup('google.com', small.key, silentApp)).statusCode).toBe(504);
      expect((await lookup('google.com', small.key, silentApp)).statusCode).toBe(429);
      expect(await silentApp.deps.redis.exists(redisKeys(silentApp.deps.config.queuePrefix).whois('google.com'))).toBe(0);
    });
  });
});

describe('WhoisClient', () => {
  let registrar: LoopbackWhois;
  let registry: LoopbackWhois;
  let elsewhere: LoopbackWhois;
  let toElsewhere: LoopbackWhois;
  let byName: LoopbackWhois;

  beforeAll(async () => {
    registrar = await whoisServer((query) => markmonitorAnswer(query), { host: '127.0.0.2' });
    const { port } = registrar;
    registry = await whoisServer((query) => verisignAnswer(query, registrar.address), { host: '127.0.0.3', port });
    // A registrar on another port than the chain's: SMTP, Redis or an admin console, as far as WHOIS knows.
    elsewhere = await whoisServer((query) => markmonitorAnswer(query), { host: '127.0.0.2' });
    toElsewhere = await whoisServer((query) => verisignAnswer(query, elsewhere.address), { host: '127.0.0.4', port });
    byName = await whoisServer((query) => verisignAnswer(query, `registrar.whois.test:${port}`), { host: '127.0.0.5', port });
  });
  afterAll(async () => Promise.all([registrar, registry, elsewhere, toElsewhere, byName].map((server) => server.close())));

  const clientOf = (server: LoopbackWhois, options: Partial<ConstructorParameters<typeof WhoisClient>[0]> = {}) =>
    new WhoisClient({ server: parseWhoisServer(server.address)!, timeoutMs: 1000, ...options });

  it('starts at a registry directly when configured so', async () => {
    const result = await clientOf(registry, { allowPrivate: true }).lookup('example.com');
    expect(result).toEqual({
      domain: 'example.com',
      complete: true,
      answers: [
        { server: registry.address, text: verisignAnswer('example.com', registrar.address) },
        { server: registrar.address, text: markmonitorAnswer('example.com') },
      ],
    });
  });

  it('asks a configured server in private address space, but follows no referral there unless allowed', async () => {
    const result = await clientOf(registry).lookup('private.com');
    expect(result.complete).toBe(false);
    expect(result.answers.map((answer) => answer.server)).toEqual([registry.address]);
    expect(registry.queries).toContain('private.com');
    expect(registrar.queries).not.toContain('private.com');
  });

  it('follows referrals only to port 43 and the configured server\'s port', async () => {
    const result = await clientOf(toElsewhere, { allowPrivate: true }).lookup('other-port.com');
    expect(result.complete).toBe(false);
    expect(result.answers.map((answer) => answer.server)).toEqual([toElsewhere.address]);
    expect(elsewhere.queries).toEqual([]);
  });

  it('checks the addresses a referral\'s host name resolves to, and connects to the address it checked', async () => {
    const resolved: string[] = [];
    const resolver = (addresses: string[]) => async (host: string) => {
      resolved.push(host);
      return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };
    // Private in any form: refused.
    for (const address of ['127.0.0.2', '::ffff:7f00:2', '::ffff:127.0.0.2', '64:ff9b::7f00:2', '2002:7f00:2::1']) {
      const result = await clientOf(byName, { resolveHost: resolver([address]) }).lookup('by-name.com');
      expect(result.complete, address).toBe(false);
      expect(result.answers).toHaveLength(1);
    }
    expect(registrar.queries).not.toContain('by-name.com');
    // Allowed: the connection goes to the resolved address (registrar.whois.test has no DNS record), resolved once.
    resolved.length = 0;
    const allowed = await clientOf(byName, { allowPrivate: true, resolveHost: resolver(['127.0.0.2']) }).lookup('by-name.com');
    expect(allowed.complete).toBe(true);
    expect(registrar.queries).toContain('by-name.com');
    expect(resolved).toEqual(['registrar.whois.test']);
  });

  it('reads referrals in the forms registries write them', () => {
    const current = { host: 'whois.example', port: 43 };
    expect(findReferral('refer:        whois.verisign-grs.com\n', current)).toEqual({ kind: 'directory', server: { host: 'whois.verisign-grs.com', port: 43 } });
    expect(findReferral('   Registrar WHOIS Server: whois.markmonitor.com\n', current)).toEqual({ kind: 'registrar', server: { host: 'whois.markmonitor.com', port: 43 } });
    expect(findReferral('Whois Server: whois://whois.example.net:4343/\n', current)).toEqual({ kind: 'registrar', server: { host: 'whois.example.net', port: 4343 } });
    // Empty, web addresses, other protocols and the server itself are no referral.
    expect(findReferral('   Registrar WHOIS Server: \n   Registrar URL: http://x\n', current)).toBeNull();
    expect(findReferral('Registrar WHOIS Server: https://whois.example.net\n', current)).toBeNull();
    expect(findReferral('ReferralServer: rwhois://rwhois.example.net:4321\n', current)).toBeNull();
    expect(findReferral('Registrar WHOIS Server: WHOIS.example\n', current)).toBeNull();
  });

  it('parses host[:port] server addresses', () => {
    expect(parseWhoisServer('whois.iana.org')).toEqual({ host: 'whois.iana.org', port: 43 });
    expect(parseWhoisServer('127.0.0.1:4343')).toEqual({ host: '127.0.0.1', port: 4343 });
    expect(parseWhoisServer('[::1]:4343')).toEqual({ host: '::1', port: 4343 });
    expect(parseWhoisServer('host:0')).toBeNull();
    expect(parseWhoisServer('http://host')).toBeNull();
    expect(parseWhoisServer('[nope]:43')).toBeNull();
  });

  it('fails with a WhoisError naming the kind', async () => {
    const client = new WhoisClient({ server: { host: '127.0.0.1', port: await freePort() }, timeoutMs: 500 });
    await expect(client.lookup('example.com')).rejects.toMatchObject({ kind: 'unavailable' });
    await expect(client.lookup('example.com')).rejects.toBeInstanceOf(WhoisError);
  });
});
