import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FREQUENCIES, SCOPES } from '@notify/core';
import { MAIL_FAILURE_SERIES } from '@notify/observability';
import { allQueueNames } from '@notify/queues';
import { startSmtpServer, type TestSmtpServer } from '@notify/mail/testing';
import { ADMIN_TOKEN } from '../support/app';
import { makeEvent, startPipeline, type PipelineHarness } from '../support/pipeline';
import { parsePrometheus, samplesOf, valueOf, type Sample } from '../support/prometheus';

const METRICS_TOKEN = 'test-metrics-token-0123456789-abcdef';

describe('/metrics after deliveries end to end', () => {
  let smtp: TestSmtpServer;
  let p: PipelineHarness;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    p = await startPipeline(smtp, { METRICS_TOKEN });
  });
  afterAll(async () => {
    await p.stop();
    await smtp.close();
  });

  async function scrape(token = ADMIN_TOKEN): Promise<Sample[]> {
    const response = await p.process.app!.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return parsePrometheus(response.body);
  }

  /** Scrapes until `ready` holds: counters move when the database has the outcome, a moment after the SMTP accept. */
  async function scrapeUntil(ready: (samples: Sample[]) => boolean, timeoutMs = 10_000): Promise<Sample[]> {
    return vi.waitFor(
      async () => {
        const samples = await scrape();
        expect(ready(samples), 'metrics reached the expected values').toBe(true);
        return samples;
      },
      { timeout: timeoutMs, interval: 50 },
    );
  }

  // First, while the process has sent nothing: alerts on rate() and absent() need the series to exist.
  it('shows every series operators alert on at 0 before the first event', async () => {
    const samples = await scrape();
    for (const scope of SCOPES) {
      expect(valueOf(samples, 'notify_events_ingested_total', { scope }), scope).toBe(0);
      expect(valueOf(samples, 'notify_events_duplicate_total', { scope }), scope).toBe(0);
      for (const frequency of FREQUENCIES) expect(valueOf(samples, 'notify_matches_total', { scope, frequency }), `${scope} ${frequency}`).toBe(0);
    }
    expect(samplesOf(samples, 'notify_events_ingested_total')).toHaveLength(21);
    expect(samplesOf(samples, 'notify_matches_total')).toHaveLength(21 * 5);
    expect(valueOf(samples, 'notify_ingest_statement_calls_count')).toBe(0);
    for (const frequency of FREQUENCIES) {
      expect(valueOf(samples, 'notify_emails_sent_total', { frequency }), frequency).toBe(0);
      expect(valueOf(samples, 'notify_delivery_latency_seconds_count', { frequency }), frequency).toBe(0);
      expect(valueOf(samples, 'notify_delivery_latency_seconds_sum', { frequency }), frequency).toBe(0);
      expect(valueOf(samples, 'notify_delivery_latency_seconds_bucket', { frequency, le: '+Inf' }), frequency).toBe(0);
      expect(valueOf(samples, 'notify_delivery_latency_seconds_bucket', { frequency, le: '60' }), frequency).toBe(0);
    }
    // Every (reason, final) pair the mailer reports, and no other.
    const failed = samplesOf(samples, 'notify_emails_failed_total');
    expect(failed.map((sample) => `${sample.labels.reason}/${sample.labels.final}=${sample.value}`).sort()).toEqual(
      ['cancelled/true=0', 'permanent/true=0', 'suppressed/true=0', 'transient/false=0', 'transient/true=0', 'unavailable/false=0'],
    );
    expect(MAIL_FAILURE_SERIES).toHaveLength(6);
  });

  it('counts ingested events, matches and e-mails sent with their labels, and times the delivery', async () => {
    const org = await p.createOrg();
    const member = org.members[0]!;
    await p.createRule(org.key, { name: 'Ports', scope: 'new_open_port_detected', members: [member.team_member_uuid] });
    const started = Date.now();
    const event = makeEvent(org.id);
    const ingest = await p.ingest({ events: [event, makeEvent(org.id, { scope: 'asset_dns_changed' })] });
    expect(ingest.statusCode).toBe(202);
    expect((await p.ingest(event)).json()).toEqual({ accepted: 0, duplicates: 1 });
    await smtp.waitFor(1);
    const samples = await scrapeUntil((s) => valueOf(s, 'notify_emails_sent_total', { frequency: 'instant' }) === 1);
    const elapsed = (Date.now() - started) / 1000;

    expect(valueOf(samples, 'notify_events_ingested_total', { scope: 'new_open_port_detected' })).toBe(1);
    expect(valueOf(samples, 'notify_events_ingested_total', { scope: 'asset_dns_changed' })).toBe(1);
    expect(valueOf(samples, 'notify_events_duplicate_total', { scope: 'new_open_port_detected' })).toBe(1);
    // Two requests one after the other: a statement each, of one call.
    expect(valueOf(samples, 'notify_ingest_statement_calls_count')).toBe(2);
    expect(valueOf(samples, 'notify_ingest_statement_calls_bucket', { le: '1' })).toBe(2);
    expect(valueOf(samples, 'notify_matches_total', { scope: 'new_open_port_detected', frequency: 'instant' })).toBe(1);
    expect(samplesOf(samples, 'notify_matches_total', { scope: 'asset_dns_changed' }).map((sample) => sample.value)).toEqual([0, 0, 0, 0, 0]);
    expect(valueOf(samples, 'notify_emails_sent_total', { frequency: 'instant' })).toBe(1);
    expect(samplesOf(samples, 'notify_emails_failed_total').map((sample) => sample.value)).toEqual([0, 0, 0, 0, 0, 0]);

    // One latency sample, from the event's arrival to the SMTP accept: more than nothing, less than the test took.
    expect(valueOf(samples, 'notify_delivery_latency_seconds_count', { frequency: 'instant' })).toBe(1);
    const latency = valueOf(samples, 'notify_delivery_latency_seconds_sum', { frequency: 'instant' })!;
    expect(latency).toBeGreaterThan(0);
    expect(latency).toBeLessThanOrEqual(elapsed);
    expect(valueOf(samples, 'notify_delivery_latency_seconds_bucket', { frequency: 'instant', le: '+Inf' })).toBe(1);

    // Job durations per queue: none. The event was matched, and its e-mail sent, without a job, by
    // the process that ingested it (it runs every role), so neither queue timed one.
    expect(valueOf(samples, 'notify_job_duration_seconds_count', { queue: 'send', status: 'completed' }) ?? 0).toBe(0);
    expect(valueOf(samples, 'notify_job_duration_seconds_count', { queue: 'match.new_open_port_detected', status: 'completed' }) ?? 0).toBe(0);
  });

  it('has a depth gauge for every one of the 23 queues, read from Redis at scrape time', async () => {
    const samples = await scrape();
    const queues = allQueueNames();
    expect(queues).toHaveLength(23);
    for (const queue of queues) {
      for (const state of ['waiting', 'active', 'delayed', 'prioritized', 'failed']) {
        expect(valueOf(samples, 'notify_queue_jobs', { queue, state }), `${queue} ${state}`).toBeTypeOf('number');
      }
    }
    expect(valueOf(samples, 'notify_queue_metrics_up')).toBe(1);
    // The process runs every role: what it matches and delivers without a job has a gauge of its own.
    expect(valueOf(samples, 'notify_in_process_work', { stage: 'match' })).toBeTypeOf('number');
    expect(valueOf(samples, 'notify_in_process_work', { stage: 'deliver' })).toBeTypeOf('number');
    expect(valueOf(samples, 'notify_in_process_work', { stage: 'send' })).toBeTypeOf('number');
    // A delayed job shows up in its queue's depth.
    await p.process.deps.queues.requestDeliver([{ ruleId: '00000000-0000-4000-8000-000000000000', periodKey: 'metrics-test' }], 60_000);
    expect(valueOf(await scrape(), 'notify_queue_jobs', { queue: 'deliver', state: 'delayed' })).toBe(1);
  });

  it('counts HTTP requests by route pattern and status, with durations', async () => {
    const org = await p.createOrg();
    await p.api(org.key, 'GET', '/v1/platform/notification-rules');
    await p.api(org.key, 'GET', '/v1/platform/notification-rules/00000000-0000-4000-8000-000000000000');
    await p.process.app!.inject({ method: 'GET', url: '/no/such/path/12345' });
    const samples = await scrape();
    const count = (route: string, method: string, status: string) =>
      valueOf(samples, 'notify_http_requests_total', { method, route, status_code: status });
    expect(count('/admin/v1/organizations', 'POST', '201')).toBeGreaterThanOrEqual(2);
    expect(count('/admin/v1/organizations/:org_id/members', 'POST', '201')).toBeGreaterThanOrEqual(2);
    expect(count('/v1/ingest/events', 'POST', '202')).toBe(2);
    expect(count('/v1/platform/notification-rules', 'GET', '200')).toBe(1);
    expect(count('/v1/platform/notification-rules/:rule_id', 'GET', '404')).toBe(1);
    expect(count('not_found', 'GET', '404')).toBe(1);
    // Route patterns only: no label carries an id or a raw path.
    const routes = new Set(samplesOf(samples, 'notify_http_requests_total').map((sample) => sample.labels.route!));
    for (const route of routes) expect(route).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-|12345/);
    expect(valueOf(samples, 'notify_http_request_duration_seconds_count', { method: 'POST', route: '/v1/ingest/events', status_code: '202' })).toBe(2);
    expect(valueOf(samples, 'notify_http_request_duration_seconds_sum', { method: 'POST', route: '/v1/ingest/events', status_code: '202' })).toBeGreaterThan(0);
    // Node.js process metrics come along.
    expect(samplesOf(samples, 'process_cpu_user_seconds_total')).toHaveLength(1);
    expect(samplesOf(samples, 'nodejs_eventloop_lag_seconds')).toHaveLength(1);
  });

  it('counts failed e-mails by reason: transient (retried) and permanent', async () => {
    const org = await p.createOrg({ memberCount: 2 });
    const [flaky, refused] = org.members;
    smtp.setVerdict(({ to, attempt }) => {
      if (to.includes(flaky!.email) && attempt === 1) return { code: 451, message: 'Try again later' };
      if (to.includes(refused!.email)) return { code: 550, message: 'No such user' };
      return 'accept';
    });
    await p.createRule(org.key, { name: 'Both', scope: 'new_vulnerability_detected', members: [flaky!.team_member_uuid, refused!.team_member_uuid] });
    await p.ingest({ events: [makeEvent(org.id, { scope: 'new_vulnerability_detected' })] });
    const samples = await scrapeUntil(
      (s) => valueOf(s, 'notify_emails_sent_total', { frequency: 'instant' }) === 2 && valueOf(s, 'notify_emails_failed_total', { reason: 'permanent', final: 'true' }) === 1,
    );
    expect(valueOf(samples, 'notify_emails_failed_total', { reason: 'transient', final: 'false' })).toBe(1);
    expect(valueOf(samples, 'notify_emails_failed_total', { reason: 'permanent', final: 'true' })).toBe(1);
    // Both first attempts were made by the process that made the deliveries, without a job; the
    // transient one's retry is a send job of its own, which completes (the refused address is failed
    // for good, not tried again). Its duration is recorded a moment after the e-mail's outcome.
    const jobs = await scrapeUntil((s) => valueOf(s, 'notify_job_duration_seconds_count', { queue: 'send', status: 'completed' }) === 1);
    expect(valueOf(jobs, 'notify_job_duration_seconds_count', { queue: 'send', status: 'failed' }) ?? 0).toBe(0);
    smtp.setVerdict(() => 'accept');
  });

  it('answers only the admin token or METRICS_TOKEN', async () => {
    const app = p.process.app!;
    const none = await app.inject({ method: 'GET', url: '/metrics' });
    expect(none.statusCode).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer realm="metrics"');
    expect((await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer wrong' } })).statusCode).toBe(401);
    expect(samplesOf(await scrape(METRICS_TOKEN), 'notify_emails_sent_total').length).toBeGreaterThan(0);
    // The metrics token opens nothing else.
    const admin = await app.inject({ method: 'GET', url: '/admin/v1/organizations', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(admin.statusCode).toBe(401);
  });
});
