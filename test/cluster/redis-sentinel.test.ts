import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSmtpServer, type TestSmtpServer } from '@notify/mail/testing';
import { makeEvent, startPipeline, type PipelineHarness } from '../support/pipeline';
import { redisClusterAvailable, startRedisSentinel, type RedisSentinelHandle } from '../support/redis-servers';

/** The whole system on a master it finds through Sentinel: REDIS_SENTINELS and REDIS_SENTINEL_MASTER instead of REDIS_URL. */
describe.skipIf(!redisClusterAvailable())('on Redis behind Sentinel', () => {
  let sentinel: RedisSentinelHandle;
  let smtp: TestSmtpServer;
  let p: PipelineHarness;

  beforeAll(async () => {
    sentinel = await startRedisSentinel();
    smtp = await startSmtpServer();
    // REDIS_URL points nowhere: only the sentinel can lead to Redis.
    p = await startPipeline(smtp, { REDIS_URL: 'redis://127.0.0.1:9', REDIS_SENTINELS: sentinel.sentinels, REDIS_SENTINEL_MASTER: sentinel.masterName });
  }, 60_000);
  afterAll(async () => {
    await p?.stop();
    await smtp?.close();
    await sentinel?.stop();
  });

  it('ingests, matches and sends an instant e-mail', async () => {
    const org = await p.createOrg();
    const member = org.members[0]!;
    await p.createRule(org.key, { name: 'Open ports', scope: 'new_open_port_detected', members: [member.team_member_uuid] });
    expect((await p.ingest({ events: [makeEvent(org.id, { title: 'Port 22 open behind Sentinel' })] })).statusCode).toBe(202);
    await vi.waitFor(() => expect(smtp.received.filter((mail) => mail.to.includes(member.email))).toHaveLength(1), { timeout: 15_000, interval: 50 });
    expect(smtp.received.find((mail) => mail.to.includes(member.email))!.text).toContain('Port 22 open behind Sentinel');
  });
});
