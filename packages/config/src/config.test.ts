import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_INGEST_LINGER_MS, loadConfig } from './config';

describe('where Redis is', () => {
  it('is one node by default, REDIS_URL', () => {
    expect(loadConfig({ REDIS_URL: 'redis://10.0.0.5:6380/2' }).redis).toEqual({ kind: 'single', url: 'redis://10.0.0.5:6380/2' });
  });

  it('is a cluster when REDIS_CLUSTER_NODES names seed nodes (REDIS_URL is then not used)', () => {
    const config = loadConfig({ REDIS_URL: 'redis://unused:1', REDIS_CLUSTER_NODES: 'redis-a:7000, redis-b:7001,[::1]:7002', REDIS_PASSWORD: 's3cret' });
    expect(config.redis).toEqual({
      kind: 'cluster',
      nodes: [{ host: 'redis-a', port: 7000 }, { host: 'redis-b', port: 7001 }, { host: '::1', port: 7002 }],
      password: 's3cret',
    });
  });

  it('is a sentinel-watched master with REDIS_SENTINELS and REDIS_SENTINEL_MASTER', () => {
    expect(loadConfig({ REDIS_SENTINELS: 's1:26379,s2:26379', REDIS_SENTINEL_MASTER: 'notify' }).redis).toEqual({
      kind: 'sentinel',
      sentinels: [{ host: 's1', port: 26379 }, { host: 's2', port: 26379 }],
      masterName: 'notify',
    });
  });

  it.each([
    [{ REDIS_CLUSTER_NODES: 'redis-a' }, /REDIS_CLUSTER_NODES.*"redis-a" is not host:port/],
    [{ REDIS_CLUSTER_NODES: 'redis-a:70000' }, /"redis-a:70000" is not host:port/],
    [{ REDIS_SENTINELS: 's1:26379' }, /REDIS_SENTINEL_MASTER: required/],
    [{ REDIS_CLUSTER_NODES: 'a:1', REDIS_SENTINELS: 's1:26379', REDIS_SENTINEL_MASTER: 'm' }, /either a cluster .* or sentinels/],
  ])('refuses %j, naming the problem', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});

describe('SMTP_URL', () => {
  it.each([
    'smtp://user:secret@mail.example.com:587',
    'smtps://user:secret@mail.example.com',
    'smtp://relay:25?tls=optional',
    'smtp://user:p%40ss@mail.example.com:587?tls=required',
    'smtp://relay:25?tls.rejectUnauthorized=false',
  ])('takes %s', (url) => {
    expect(loadConfig({ SMTP_URL: url }).mail.smtpUrl).toBe(url);
  });

  it.each([
    ['smtp://user:s3cret-pw@relay:25?tls=maybe', 'tls= must be required or optional'],
    ['http://user:s3cret-pw@relay', 'expected an smtp:// or smtps:// URL'],
    ['//user:s3cret-pw@relay', 'expected smtp://'],
  ])('refuses %s at start, without repeating the password', (url, message) => {
    expect(() => loadConfig({ SMTP_URL: url })).toThrow(message);
    expect(() => loadConfig({ SMTP_URL: url })).not.toThrow('s3cret-pw');
  });
});

describe('WHOIS_ALLOW_PRIVATE', () => {
  it('is false unless set to true', () => {
    expect(loadConfig({}).whois.allowPrivate).toBe(false);
    expect(loadConfig({ WHOIS_ALLOW_PRIVATE: 'true' }).whois.allowPrivate).toBe(true);
    expect(() => loadConfig({ WHOIS_ALLOW_PRIVATE: 'yes' })).toThrow('WHOIS_ALLOW_PRIVATE');
  });
});

const TOKEN = 'a'.repeat(32);

function problems(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('the configuration was accepted');
}

describe('tokens', () => {
  it('refuses ADMIN_TOKEN, INGEST_TOKEN and METRICS_TOKEN shorter than 32 characters, naming each', () => {
    const message = problems({ ADMIN_TOKEN: 'change-me', INGEST_TOKEN: `${TOKEN},short-one`, METRICS_TOKEN: 'x'.repeat(31) });
    expect(message).toMatch(/ADMIN_TOKEN: must be at least 32 characters/);
    expect(message).toMatch(/INGEST_TOKEN: every token must be at least 32 characters/);
    expect(message).toMatch(/METRICS_TOKEN: must be at least 32 characters/);
  });

  it('takes tokens of 32 characters or more, and no token at all', () => {
    const config = loadConfig({ ADMIN_TOKEN: TOKEN, INGEST_TOKEN: `${TOKEN}, ${'b'.repeat(40)}`, METRICS_TOKEN: 'c'.repeat(32) });
    expect(config.adminToken).toBe(TOKEN);
    expect(config.ingestTokens).toEqual([TOKEN, 'b'.repeat(40)]);
    const none = loadConfig({ ADMIN_TOKEN: '', INGEST_TOKEN: '' });
    expect(none.adminToken).toBeUndefined();
    expect(none.ingestTokens).toEqual([]);
  });
});

describe('TRUST_PROXY', () => {
  it('is off by default', () => expect(loadConfig({}).http.trustProxy).toBe(false));

  it('names the trusted proxies by address, CIDR or proxy-addr range name', () => {
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 192.0.2.7,loopback,2001:db8::/32' }).http.trustProxy).toEqual(['10.0.0.0/8', '192.0.2.7', 'loopback', '2001:db8::/32']);
  });

  it('refuses true (it would trust any X-Forwarded-For), hop counts and anything else', () => {
    expect(problems({ TRUST_PROXY: 'true' })).toMatch(/TRUST_PROXY: name the trusted proxies .*true would trust any X-Forwarded-For/);
    expect(problems({ TRUST_PROXY: '1' })).toMatch(/TRUST_PROXY: .*a hop count cannot tell a proxy from a client/);
    for (const value of ['proxy.example', '10.0.0.0/33', 'yes', '::1/129', '10.0.0.1,*']) {
      expect(problems({ TRUST_PROXY: value }), value).toMatch(/TRUST_PROXY/);
    }
  });
});

describe('time bounds and failure budgets', () => {
  it('have defaults and take values', () => {
    const defaults = loadConfig({});
    expect(defaults.apiStatementTimeoutMs).toBe(5000);
    expect(defaults.http.requestTimeoutMs).toBe(30_000);
    expect(defaults.http.connectionTimeoutMs).toBe(60_000);
    expect(defaults.authFailures).toEqual({ perAddress: 20, total: 2000, windowMs: 60_000 });
    const set = loadConfig({ API_STATEMENT_TIMEOUT_MS: '250', AUTH_FAILURES_PER_ADDRESS: '5', AUTH_FAILURES_TOTAL: '50', AUTH_FAILURE_WINDOW_MS: '10000' });
    expect(set.apiStatementTimeoutMs).toBe(250);
    expect(set.authFailures).toEqual({ perAddress: 5, total: 50, windowMs: 10_000 });
    expect(problems({ API_STATEMENT_TIMEOUT_MS: '0', HTTP_REQUEST_TIMEOUT_MS: '0' })).toMatch(/API_STATEMENT_TIMEOUT_MS[\s\S]*HTTP_REQUEST_TIMEOUT_MS|HTTP_REQUEST_TIMEOUT_MS[\s\S]*API_STATEMENT_TIMEOUT_MS/);
  });
});

describe('MAIL_COMPOSE_THREADS', () => {
  it('is one thread by default, 0 to compose in the event loop, at most 16', () => {
    expect(loadConfig({}).mail.composeThreads).toBe(1);
    expect(loadConfig({ MAIL_COMPOSE_THREADS: '0' }).mail.composeThreads).toBe(0);
    expect(loadConfig({ MAIL_COMPOSE_THREADS: '4' }).mail.composeThreads).toBe(4);
    for (const value of ['-1', '17', '1.5', 'two']) expect(problems({ MAIL_COMPOSE_THREADS: value })).toMatch(/MAIL_COMPOSE_THREADS/);
  });
});

describe('INGEST_LINGER_MS', () => {
  it('is DEFAULT_INGEST_LINGER_MS (30) by default, 0 never to wait, at most 1000', () => {
    expect(DEFAULT_INGEST_LINGER_MS).toBe(30);
    expect(loadConfig({}).pipeline.ingestLingerMs).toBe(DEFAULT_INGEST_LINGER_MS);
    expect(loadConfig({ INGEST_LINGER_MS: '0' }).pipeline.ingestLingerMs).toBe(0);
    expect(loadConfig({ INGEST_LINGER_MS: '1000' }).pipeline.ingestLingerMs).toBe(1000);
    for (const value of ['-1', '1001', '2.5', 'soon']) expect(problems({ INGEST_LINGER_MS: value })).toMatch(/INGEST_LINGER_MS/);
  });
});

describe('DKIM_DOMAIN, DKIM_SELECTOR, DKIM_PRIVATE_KEY', () => {
  const pem = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

  it('signs with all three, and is off with none', () => {
    expect(loadConfig({ DKIM_DOMAIN: 'example.com', DKIM_SELECTOR: 's1', DKIM_PRIVATE_KEY: pem }).mail.dkim).toEqual({ domainName: 'example.com', keySelector: 's1', privateKey: pem.trim() });
    expect(loadConfig({}).mail.dkim).toBeUndefined();
  });

  it('refuses some without the others, and a key that is no key, without echoing it', () => {
    expect(() => loadConfig({ DKIM_DOMAIN: 'example.com' })).toThrow('set all three to sign e-mails, or none');
    const secretish = 'not-a-pem-but-secret-material-0123456789';
    const error = (() => {
      try {
        loadConfig({ DKIM_DOMAIN: 'example.com', DKIM_SELECTOR: 's1', DKIM_PRIVATE_KEY: secretish });
      } catch (caught) {
        return caught as Error;
      }
      return undefined;
    })();
    expect(error?.message).toContain('DKIM_PRIVATE_KEY: not a readable PEM private key');
    expect(error?.message).not.toContain(secretish);
    expect(() => loadConfig({ DKIM_DOMAIN: 'example.com', DKIM_SELECTOR: 's1', DKIM_PRIVATE_KEY_FILE: '/nonexistent/key.pem' })).toThrow('DKIM_PRIVATE_KEY_FILE: not a readable PEM private key (ENOENT)');
  });
});
