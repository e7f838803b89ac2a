// Set-based seeding for `npm run bench:pipeline`: one INSERT … SELECT FROM unnest(arrays)
// per table and chunk, never the API, so 100,000 rules take seconds.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { SCOPES, SEVERITIES, validateFilters, type Filters, type Frequency, type Scope } from './notify';

export interface OrgSeed {
  id: string;
  name: string;
  timezone: string;
}

export interface MemberSeed {
  id: string;
  organizationId: string;
  email: string;
}

export interface RuleSeed {
  id: string;
  organizationId: string;
  name: string;
  scope: Scope;
  strategy: Filters | null;
  frequency: Frequency;
  deliveryHour: number | null;
  deliveryDayOfWeek: number | null;
  enabled: boolean;
  memberIds: string[];
}

/** An event in the wire shape of POST /v1/ingest/events. */
export interface WireEvent {
  id: string;
  organization_id: string;
  scope: Scope;
  occurred_at: string;
  asset: string;
  asset_type: string;
  severity: string;
  tags: string[];
  title: string;
  summary: string;
  url: string;
  data: Record<string, unknown>;
}

export interface MatchSeed {
  ruleId: string;
  organizationId: string;
  eventId: string;
  periodKey: string;
  dueAt: Date;
}

const CHUNK = 10_000;

async function chunked<T>(items: readonly T[], insert: (chunk: readonly T[]) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += CHUNK) await insert(items.slice(i, i + CHUNK));
}

export async function insertOrganizations(pool: pg.Pool, orgs: readonly OrgSeed[]): Promise<void> {
  await chunked(orgs, (chunk) =>
    pool.query(
      `INSERT INTO organizations (id, name, timezone, rate_limit_per_second, rate_limit_per_minute, monthly_quota)
       SELECT t.id, t.name, t.timezone, 1000000, 1000000, 1000000000 FROM unnest($1::uuid[], $2::text[], $3::text[]) AS t(id, name, timezone)`,
      [chunk.map((o) => o.id), chunk.map((o) => o.name), chunk.map((o) => o.timezone)],
    ),
  );
}

export async function insertMembers(pool: pg.Pool, members: readonly MemberSeed[]): Promise<void> {
  await chunked(members, (chunk) =>
    pool.query(
      'INSERT INTO team_members (id, organization_id, email, name) SELECT t.id, t.org, t.email, t.email FROM unnest($1::uuid[], $2::uuid[], $3::text[]) AS t(id, org, email)',
      [chunk.map((m) => m.id), chunk.map((m) => m.organizationId), chunk.map((m) => m.email)],
    ),
  );
}

export async function insertRules(pool: pg.Pool, rules: readonly RuleSeed[]): Promise<void> {
  await chunked(rules, async (chunk) => {
    await pool.query(
      `INSERT INTO notification_rules (id, organization_id, name, scope, strategy, frequency, delivery_hour, delivery_day_of_week, enabled)
       SELECT t.id, t.org, t.name, t.scope::scope, t.strategy, t.frequency::frequency, t.hour, t.day, t.enabled
         FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::jsonb[], $6::text[], $7::smallint[], $8::smallint[], $9::boolean[])
              AS t(id, org, name, scope, strategy, frequency, hour, day, enabled)`,
      [
        chunk.map((r) => r.id),
        chunk.map((r) => r.organizationId),
        chunk.map((r) => r.name),
        chunk.map((r) => r.scope),
        chunk.map((r) => (r.strategy ? JSON.stringify(r.strategy) : null)),
        chunk.map((r) => r.frequency),
        chunk.map((r) => r.deliveryHour),
        chunk.map((r) => r.deliveryDayOfWeek),
        chunk.map((r) => r.enabled),
      ],
    );
    const links = chunk.flatMap((r) => r.memberIds.map((memberId) => [r.id, memberId] as const));
    await pool.query('INSERT INTO notification_rule_members (rule_id, team_member_id) SELECT * FROM unnest($1::uuid[], $2::uuid[])', [
      links.map((link) => link[0]),
      links.map((link) => link[1]),
    ]);
  });
}

/** Stores events as ingest would (matched_at null), or as already matched. */
export async function insertEvents(pool: pg.Pool, events: readonly WireEvent[], matchedAt: Date | null = null): Promise<void> {
  await chunked(events, (chunk) =>
    pool.query(
      `INSERT INTO events (organization_id, id, scope, occurred_at, asset, asset_type, severity, tags, title, summary, url, data, matched_at)
       SELECT r.org, r.id, r.scope::scope, r.occurred_at, r.asset, r.asset_type, r.severity,
              ARRAY(SELECT jsonb_array_elements_text(r.tags)), r.title, r.summary, r.url, r.data, $13
         FROM unnest($1::uuid[], $2::text[], $3::text[], $4::timestamptz[], $5::text[], $6::text[], $7::text[],
                     $8::jsonb[], $9::text[], $10::text[], $11::text[], $12::jsonb[])
           AS r(org, id, scope, occurred_at, asset, asset_type, severity, tags, title, summary, url, data)`,
      [
        chunk.map((e) => e.organization_id),
        chunk.map((e) => e.id),
        chunk.map((e) => e.scope),
        chunk.map((e) => e.occurred_at),
        chunk.map((e) => e.asset),
        chunk.map((e) => e.asset_type),
        chunk.map((e) => e.severity),
        chunk.map((e) => JSON.stringify(e.tags)),
        chunk.map((e) => e.title),
        chunk.map((e) => e.summary),
        chunk.map((e) => e.url),
        chunk.map((e) => JSON.stringify(e.data)),
        matchedAt,
      ],
    ),
  );
}

export async function insertPendingMatches(pool: pg.Pool, matches: readonly MatchSeed[]): Promise<void> {
  await chunked(matches, (chunk) =>
    pool.query(
      `INSERT INTO matches (rule_id, organization_id, event_id, event_received_at, period_key, due_at)
       SELECT m.rule_id, m.organization_id, m.event_id, e.received_at, m.period_key, m.due_at
         FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::timestamptz[]) AS m(rule_id, organization_id, event_id, period_key, due_at)
         JOIN events e ON e.organization_id = m.organization_id AND e.id = m.event_id`,
      [chunk.map((m) => m.ruleId), chunk.map((m) => m.organizationId), chunk.map((m) => m.eventId), chunk.map((m) => m.periodKey), chunk.map((m) => m.dueAt)],
    ),
  );
}

// ---------------------------------------------------------------------------------
// Shapes

const TIMEZONES = ['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Tokyo', 'Australia/Sydney'];
const TAGS = ['production', 'staging', 'test', 'pci', 'external', 'internal'];
const SERVICES: Array<[number, string]> = [[22, 'ssh'], [80, 'http'], [443, 'https'], [445, 'smb'], [3389, 'rdp'], [5432, 'postgresql'], [6379, 'redis']];

export function organizations(count: number, random: () => number, label: string): OrgSeed[] {
  return Array.from({ length: count }, (_, i) => ({
    id: randomUUID(),
    name: `${label} organization ${i}`,
    timezone: TIMEZONES[Math.floor(random() * TIMEZONES.length)]!,
  }));
}

/** Strategies as customers write them; validated and normalized like the API does. */
const STRATEGY_INPUTS: unknown[] = [
  { must: [{ name: 'severity', type: 'gte', value: 'high' }] },
  { must_not: [{ name: 'tags', type: 'contains_any', value: ['test', 'staging'] }] },
  {
    must: [{ name: 'asset', type: 'wildcard', value: '*.example.com' }],
    should: [{ name: 'data.port', type: 'in', value: [22, 3389, 445] }, { name: 'severity', type: 'eq', value: 'critical' }],
  },
  { must: [{ name: 'tags', type: 'contains_any', value: ['production', 'pci'] }, { name: 'data.service', type: 'exists' }] },
  { must: [{ name: 'asset_type', type: 'in', value: ['subdomain', 'ip'] }, { name: 'severity', type: 'gte', value: 'medium' }], must_not: [{ name: 'asset', type: 'startswith', value: 'dev' }] },
];
export const STRATEGIES: Filters[] = STRATEGY_INPUTS.map((input) => {
  const result = validateFilters(input);
  if (!result.ok) throw new Error(`invalid bench strategy: ${JSON.stringify(result.issues)}`);
  return result.value;
});

export function digestSchedule(frequency: Frequency, random: () => number): { deliveryHour: number | null; deliveryDayOfWeek: number | null } {
  return {
    deliveryHour: frequency === 'instant' || frequency === 'hourly' ? null : Math.floor(random() * 24),
    deliveryDayOfWeek: frequency === 'weekly' ? Math.floor(random() * 7) : null,
  };
}

/** A realistic event of `scope` for an organization. */
export function wireEvent(random: () => number, id: string, organizationId: string, scope: Scope, orgIndex: number): WireEvent {
  const [port, service] = SERVICES[Math.floor(random() * SERVICES.length)]!;
  const host = Math.floor(random() * 500);
  const asset = random() < 0.1 ? `dev${host}.org${orgIndex}.example.com` : `host${host}.org${orgIndex}.example.com`;
  const tags = TAGS.filter(() => random() < 0.3);
  return {
    id,
    organization_id: organizationId,
    scope,
    occurred_at: new Date(Date.now() - Math.floor(random() * 3_600_000)).toISOString(),
    asset,
    asset_type: random() < 0.8 ? 'subdomain' : 'ip',
    severity: SEVERITIES[Math.floor(random() * SEVERITIES.length)]!,
    tags,
    title: `Port ${port} (${service}) open on ${asset}`,
    summary: `${service} is reachable from the internet on port ${port}; it was not reachable at the previous scan.`,
    url: `https://platform.example.com/findings/${encodeURIComponent(id)}`,
    data: { port, service, banner: `${service} banner ${host}` },
  };
}

export function randomScope(random: () => number): Scope {
  return SCOPES[Math.floor(random() * SCOPES.length)]!;
}

/**
 * Digest rules with one member each and `eventsPerRule` pending matches each, all under one period
 * key and due at `dueAt`, 50 rules to an organization, written to the database (and analyzed).
 * `label` names the organizations, rules and addresses; `frequency` picks each rule's frequency.
 */
export async function seedDigestRules(
  pool: pg.Pool,
  options: { rules: number; eventsPerRule: number; periodKey: string; dueAt: Date; label: string; random: () => number; frequency: () => Frequency },
): Promise<{ rules: RuleSeed[]; matches: number }> {
  const { random, label } = options;
  const orgCount = Math.max(1, Math.round(options.rules / 50));
  const orgs = organizations(orgCount, random, label);
  const members: MemberSeed[] = [];
  const rules: RuleSeed[] = [];
  const events: WireEvent[] = [];
  const matches: MatchSeed[] = [];
  const prefix = label.toLowerCase();
  for (let k = 0; k < options.rules; k++) {
    const o = k % orgCount;
    const org = orgs[o]!;
    const member = { id: randomUUID(), organizationId: org.id, email: `${prefix}${k}@${prefix}.bench.example.com` };
    const frequency = options.frequency();
    const scope = randomScope(random);
    const rule: RuleSeed = {
      id: randomUUID(), organizationId: org.id, name: `${label} ${k}`, scope, strategy: null, frequency,
      ...digestSchedule(frequency, random), enabled: true, memberIds: [member.id],
    };
    members.push(member);
    rules.push(rule);
    for (let e = 0; e < options.eventsPerRule; e++) {
      const event = wireEvent(random, `${prefix}-${k}-${e}`, org.id, scope, o);
      events.push(event);
      matches.push({ ruleId: rule.id, organizationId: org.id, eventId: event.id, periodKey: options.periodKey, dueAt: options.dueAt });
    }
  }
  await insertOrganizations(pool, orgs);
  await insertMembers(pool, members);
  await insertRules(pool, rules);
  await insertEvents(pool, events, new Date());
  await insertPendingMatches(pool, matches);
  await pool.query('ANALYZE organizations, team_members, notification_rules, notification_rule_members, events, matches');
  return { rules, matches: matches.length };
}

/**
 * Instant rules, one per (organization, scope), each with a member of its own (`<label><k>@...`),
 * written to the database (and analyzed): every event of (organization k / 21, scope k % 21) is
 * the first match of rule k, and its e-mail is known by its recipient.
 */
export async function seedInstantRules(pool: pg.Pool, options: { rules: number; label: string; random: () => number }): Promise<{ orgs: OrgSeed[]; rules: RuleSeed[] }> {
  const orgCount = Math.ceil(options.rules / SCOPES.length);
  const orgs = organizations(orgCount, options.random, options.label);
  const prefix = options.label.toLowerCase();
  const members: MemberSeed[] = [];
  const rules: RuleSeed[] = [];
  for (let k = 0; k < orgCount * SCOPES.length; k++) {
    const org = orgs[Math.floor(k / SCOPES.length)]!;
    const member = { id: randomUUID(), organizationId: org.id, email: `${prefix}${k}@${prefix}.bench.example.com` };
    members.push(member);
    rules.push({
      id: randomUUID(), organizationId: org.id, name: `${options.label} ${k}`, scope: SCOPES[k % SCOPES.length]!, strategy: null,
      frequency: 'instant', deliveryHour: null, deliveryDayOfWeek: null, enabled: true, memberIds: [member.id],
    });
  }
  await insertOrganizations(pool, orgs);
  await insertMembers(pool, members);
  await insertRules(pool, rules);
  await pool.query('ANALYZE organizations, team_members, notification_rules, notification_rule_members');
  return { orgs, rules };
}
