import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lazyMailRenderer, previewRule, type PreviewedRule } from '@notify/pipeline';
import { createTestDatabase } from '../support/database';

// A preview reads its 30 days as slices of time read at once (PREVIEW_SLICES); the replay must see
// every match in arrival order, whichever slice it came from. The events here sit on both sides of
// the slices' boundary (15 days ago), close enough to it that an order mended wrongly shows.
describe('previewRule: the stored events of the whole range, replayed in arrival order', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  const now = new Date('2026-11-20T12:00:00Z');
  const org = { id: randomUUID(), name: 'Acme', timezone: 'UTC' };
  const member = { id: randomUUID(), email: 'a@acme.example', name: null };
  const renderer = lazyMailRenderer();
  const ctx = () => ({ db, instantCoalesceMs: 60_000, now: () => now, renderer });
  const ago = (ms: number) => new Date(now.getTime() - ms);
  const DAY = 86_400_000;
  const HOUR = 3_600_000;
  const boundary = 15 * DAY;
  const rule: PreviewedRule = {
    name: 'Ports', scope: 'new_open_port_detected', strategy: null, frequency: 'daily', deliveryHour: 9, deliveryDayOfWeek: null, renotifyAfterHours: null, members: [member],
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.pool.query(`INSERT INTO organizations (id, name) VALUES ($1, 'Acme')`, [org.id]);
    const events: Array<[string, Date, string]> = [
      // The same finding an hour before the boundary and an hour after it, then two days later.
      ['before-boundary', ago(boundary + HOUR), 'RDP open on a.acme.example'],
      ['after-boundary', ago(boundary - HOUR), 'RDP open on a.acme.example'],
      ['two-days-later', ago(boundary - 2 * DAY), 'RDP open on a.acme.example'],
      // Each alone on its day, far from the others.
      ['old', ago(25 * DAY), 'SSH open on b.acme.example'],
      ['new', ago(3 * DAY), 'HTTP open on c.acme.example'],
      // Out of the range: never read.
      ['too-old', ago(31 * DAY), 'FTP open on d.acme.example'],
    ];
    for (const [id, at, title] of events) {
      await db.pool.query(
        `INSERT INTO events (organization_id, id, scope, occurred_at, asset, title, received_at, matched_at) VALUES ($1, $2, 'new_open_port_detected', $3, 'a.acme.example', $4, $3, $3)`,
        [org.id, id, at, title],
      );
    }
  });
  afterAll(async () => {
    await db.drop();
  });

  it('counts one e-mail per day with matches, oldest first, and samples the newest', async () => {
    const preview = await previewRule(ctx(), org, rule, 30);
    expect(preview.matchedEvents).toBe(5);
    // 25 days ago; the boundary's two days (an hour either side of noon 15 days ago is one day); 13 days ago; 3 days ago.
    expect(preview.emails).toBe(4);
    expect(preview.sample?.text).toContain('HTTP open on c.acme.example');
    expect(preview.sample?.text).not.toContain('RDP open');
  });

  it('holds a finding seen an hour before the boundary a repeat an hour after it, and news again two days later', async () => {
    const preview = await previewRule(ctx(), org, { ...rule, renotifyAfterHours: 24 }, 30);
    expect(preview.matchedEvents).toBe(5);
    expect(preview.repeats).toBe(1);
    expect(preview.emails).toBe(4);
  });

  it('sends an instant rule the match after the boundary as a new e-mail, and nothing it never read', async () => {
    const preview = await previewRule(ctx(), org, { ...rule, frequency: 'instant', deliveryHour: null }, 30);
    expect(preview.emails).toBe(5);
    const week = await previewRule(ctx(), org, { ...rule, frequency: 'instant', deliveryHour: null }, 7);
    expect(week.matchedEvents).toBe(1);
    expect(week.emails).toBe(1);
  });
});
