import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { QUEUE_NAMES, queueKeyPrefix } from '@notify/queues';
import { startSmtpServer, type TestSmtpServer } from '@notify/mail/testing';
import { INGEST_TOKEN } from '../support/app';
import { makeEvent, startPipeline, type PipelineHarness } from '../support/pipeline';
import { redisClusterAvailable, startRedisCluster, type RedisClusterHandle } from '../support/redis-servers';
import { expectDeliveredOnce, useScenario } from '../faults/support/scenario';
import { processEnv } from '../faults/support/services';
import { report, sendStream, settle, storedEvents, tally } from '../faults/support/stream';

const RULES = '/v1/platform/notification-rules';

/**
 * The whole system on a real Redis Cluster (3 masters, a replica each, on loopback ports):
 * REDIS_CLUSTER_NODES instead of REDIS_URL, every queue's keys in a hash slot of its own.
 */
describe.skipIf(!redisClusterAvailable())('on a Redis Cluster', () => {
  let cluster: RedisClusterHandle;
  let smtp: TestSmtpServer;
  let p: PipelineHarness;
  let second: PipelineHarness;

  beforeAll(async () => {
    cluster = await startRedisCluster(3);
    smtp = await startSmtpServer();
    p = await startPipeline(smtp, { REDIS_CLUSTER_NODES: cluster.nodes });
    // A second API instance of the same deployment (same database and prefix), API role only.
    second = await startPipeline(smtp, { REDIS_CLUSTER_NODES: cluster.nodes, ROLES: 'api' }, { db: p.db, queuePrefix: p.queuePrefix });
  }, 90_000);
  afterAll(async () => {
    await second?.stop();
    await p?.stop();
    await smtp?.close();
    await cluster?.stop();
  });

  const mailsTo = (email: string) => smtp.received.filter((mail) => mail.to.includes(email));

  it('spreads the queues over the shards: their keys sit in slots of different masters', async () => {
    const names = [QUEUE_NAMES.send, QUEUE_NAMES.deliver, ...QUEUE_NAMES.match];
    // BullMQ's scripts touch several keys of one queue at once: a queue's keys share one slot ...
    for (const name of names) {
      const slots = await Promise.all(['wait', 'active', 'meta', 'events', 'id'].map((suffix) => cluster.slotOf(`${queueKeyPrefix(p.queuePrefix, name)}:${name}:${suffix}`)));
      expect(new Set(slots).size, name).toBe(1);
    }
    // ... and the queues spread over the masters.
    const owners = new Set(await Promise.all(names.map((name) => cluster.masterOf(`${queueKeyPrefix(p.queuePrefix, name)}:${name}:wait`))));
    expect(owners.size).toBe(3);
  });

  it('sends an instant rule its first match at once', async () => {
    const org = await p.createOrg();
    const member = org.members[0]!;
    await p.createRule(org.key, { name: 'Open ports', scope: 'new_open_port_detected', members: [member.team_member_uuid] });
    const response = await p.ingest({ events: [makeEvent(org.id, { title: 'Port 3389 open on the cluster' })] });
    expect(response.statusCode, response.body).toBe(202);
    await vi.waitFor(() => expect(mailsTo(member.email)).toHaveLength(1), { timeout: 15_000, interval: 50 });
    expect(mailsTo(member.email)[0]!.text).toContain('Port 3389 open on the cluster');
  });

  it('holds a daily digest and sends it, one per member, when the rule is flushed', async () => {
    const org = await p.createOrg({ memberCount: 2 });
    const rule = await p.createRule(org.key, {
      name: 'Daily', scope: 'new_open_port_detected', frequency: 'daily', delivery_hour: 8,
      members: org.members.map((member) => member.team_member_uuid),
    });
    expect((await p.ingest({ events: [makeEvent(org.id), makeEvent(org.id)] })).statusCode).toBe(202);
    await vi.waitFor(async () => {
      const { rows } = await p.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM matches WHERE rule_id = $1`, [rule.id]);
      expect(rows[0]!.n).toBe(2);
    }, { timeout: 15_000, interval: 50 });
    expect(org.members.flatMap((member) => mailsTo(member.email))).toHaveLength(0);
    const flush = await p.admin('POST', `/admin/v1/notification-rules/${rule.id}/flush`);
    expect(flush.json()).toEqual({ matches: 2, deliveries: 2 });
    for (const member of org.members) await vi.waitFor(() => expect(mailsTo(member.email)).toHaveLength(1), { timeout: 15_000, interval: 50 });
  });

  it('holds the rate limit across two instances', async () => {
    const org = await p.createOrg();
    const plan = await p.admin('PATCH', `/admin/v1/organizations/${org.id}`, { plan: { rate_limit_per_second: 1000, rate_limit_per_minute: 10 } });
    expect(plan.statusCode, plan.body).toBe(200);
    const statuses = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? second : p).api(org.key, 'GET', RULES).then((r) => r.statusCode)));
    expect(statuses.filter((status) => status === 200)).toHaveLength(10);
    expect(statuses.filter((status) => status === 429)).toHaveLength(20);
  });

  it('a key deleted through one instance stops working on the other within a second', async () => {
    const org = await p.createOrg();
    const extra = await p.admin('POST', `/admin/v1/organizations/${org.id}/api-keys`, { name: 'extra' });
    const { id, key } = extra.json() as { id: string; key: string };
    expect((await second.api(key, 'GET', RULES)).statusCode).toBe(200);
    expect((await p.admin('DELETE', `/admin/v1/organizations/${org.id}/api-keys/${id}`)).statusCode).toBe(204);
    await vi.waitFor(async () => expect((await second.api(key, 'GET', RULES)).statusCode).toBe(401), { timeout: 1000, interval: 50 });
  });
});

describe.skipIf(!redisClusterAvailable())('on a Redis Cluster whose master fails over mid-stream', () => {
  const EVENTS = 300;
  let cluster: RedisClusterHandle;
  const s = useScenario({
    events: EVENTS,
    tag: `cluster-${randomBytes(2).toString('hex')}`,
    smtp: { acceptDelayMs: 5 },
    around: {
      before: async () => {
        cluster = await startRedisCluster(3);
      },
      after: () => cluster.stop(),
    },
  });

  it('delivers every e-mail once: the reconciler and retries cover what the failover lost', async () => {
    const env = { ...processEnv(s.db, { smtpUrl: s.smtp.url }), REDIS_CLUSTER_NODES: cluster.nodes };
    const api = await s.spawn({ ...env, ROLES: 'api' });
    const worker = await s.spawn({ ...env, ROLES: 'match,schedule,deliver,send' });
    // The master of the send queue: the last step before the SMTP server.
    const victim = await cluster.masterOf('{send}');
    let failover: Promise<void> | undefined;
    const stream = await sendStream(() => api.baseUrl!, INGEST_TOKEN, s.setup.events, {
      onRequest: (request) => {
        if (request === Math.floor(EVENTS / 5 / 2)) failover = cluster.killMaster(victim);
      },
    });
    await failover;

    const stored = await storedEvents(s.db);
    for (const id of stream.accepted) expect(stored.has(id), `accepted event ${id} was not stored`).toBe(true);
    const figures = await settle(s.db, () => tally(s.setup, stored, s.smtp.received), 90_000);
    report('redis-cluster-failover', { ...figures, not_accepted: EVENTS - stream.accepted.size, ingest: stream.outcomes });
    expectDeliveredOnce(figures);
    expect(api.child.exitCode, api.stderr()).toBeNull();
    expect(worker.child.exitCode, worker.stderr()).toBeNull();
  }, 180_000);
});
