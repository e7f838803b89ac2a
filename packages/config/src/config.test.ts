import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config';

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
