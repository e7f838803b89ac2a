import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config';

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
