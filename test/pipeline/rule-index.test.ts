import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RuleIndex } from '@notify/pipeline';
import { createTestDatabase } from '../support/database';

describe('the match stage rule index', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  const org = randomUUID();
  const other = randomUUID();

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.pool.query(`INSERT INTO organizations (id, name, timezone) VALUES ($1, 'o', 'UTC'), ($2, 'p', 'UTC')`, [org, other]);
  });
  afterAll(async () => db.drop());

  async function rule(organizationId: string, fields: { scope?: string; enabled?: boolean; strategy?: unknown; frequency?: string } = {}): Promise<string> {
    const id = randomUUID();
    await db.pool.query(
      `INSERT INTO notification_rules (id, organization_id, name, scope, strategy, frequency, enabled) VALUES ($1, $2, 'r', $3, $4, $5, $6)`,
      [id, organizationId, fields.scope ?? 'asset_dns_changed', fields.strategy === undefined ? null : JSON.stringify(fields.strategy), fields.frequency ?? 'instant', fields.enabled ?? true],
    );
    return id;
  }

  it('holds enabled rules by organization and scope, strategies compiled', async () => {
    const plain = await rule(org);
    const critical = await rule(org, { strategy: { must: [{ name: 'severity', type: 'eq', value: 'critical' }], should: [], must_not: [] } });
    await rule(org, { enabled: false });
    await rule(org, { scope: 'asset_ssl_changed' });
    await rule(other);
    const index = new RuleIndex();
    await index.loadAll(db);
    const rules = index.rulesFor(org, 'asset_dns_changed');
    expect(rules.map((r) => r.id).sort()).toEqual([plain, critical].sort());
    const event = { asset: 'a.example', severity: 'low' };
    expect(rules.filter((r) => r.matches(event)).map((r) => r.id)).toEqual([plain]);
  });

  it('follows announced changes of rules and organizations, and a full resync catches the rest', async () => {
    const index = new RuleIndex();
    await index.loadAll(db);
    const added = await rule(org, { scope: 'new_asset_added' });
    expect(index.has(added)).toBe(false);
    await index.refresh(db, { ruleIds: [added] });
    expect(index.has(added)).toBe(true);

    await db.pool.query('UPDATE notification_rules SET enabled = false WHERE id = $1', [added]);
    await index.refresh(db, { ruleIds: [added] });
    expect(index.has(added)).toBe(false);

    await db.pool.query(`UPDATE organizations SET timezone = 'Europe/Berlin' WHERE id = $1`, [org]);
    await index.refresh(db, { organizationIds: [org] });
    expect(index.rulesFor(org, 'asset_dns_changed').every((r) => r.timeZone === 'Europe/Berlin')).toBe(true);

    // A change nobody announced is picked up by the periodic full reload.
    const silent = await rule(other, { scope: 'new_asset_added' });
    expect(index.has(silent)).toBe(false);
    await index.loadAll(db);
    expect(index.has(silent)).toBe(true);
  });
});
