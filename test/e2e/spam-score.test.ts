import { execFile } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { makeEvent, usePipeline } from '../support/pipeline';
import { waitUntilSettled } from '../support/wait';

const SPAMASSASSIN = '/usr/bin/spamassassin';

/** SpamAssassin's report of a message, local rules only (-L: no DNS, no network tests). */
function score(raw: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(SPAMASSASSIN, ['-L', '-t'], { maxBuffer: 16 * 1024 * 1024, timeout: 60_000 }, (error, stdout) => {
      // -t exits 1 for spam: the report is what counts.
      if (error && typeof error.code !== 'number') reject(error);
      else resolve(stdout);
    });
    child.stdin!.end(raw);
  });
}

/** The rules that fired, with their points, from the report's "Content analysis details". */
function firedRules(report: string): Array<{ points: number; rule: string }> {
  const details = report.slice(report.indexOf('Content analysis details'));
  const fired: Array<{ points: number; rule: string }> = [];
  for (const line of details.split('\n')) {
    const found = /^\s*(-?\d+(?:\.\d+)?)\s+([A-Z0-9_]{2,})\s/.exec(line);
    if (found) fired.push({ points: Number(found[1]), rule: found[2]! });
  }
  return fired;
}

describe.skipIf(!existsSync(SPAMASSASSIN))('spam score: SpamAssassin finds nothing to hold against an instant e-mail or a digest', () => {
  const t = usePipeline({ PUBLIC_URL: 'https://notify.example.com', MAIL_FROM: 'Notify <alerts@notify.example.com>' });

  it('fires no rule with a positive score', async () => {
    const org = await t.p.createOrg({ name: 'Acme Security' });
    const member = org.members[0]!;
    await t.p.createRule(org.key, { name: 'New ports', scope: 'new_open_port_detected', members: [member.team_member_uuid] });
    const digest = await t.p.createRule(org.key, { name: 'Certificates', scope: 'asset_ssl_changed', frequency: 'daily', members: [member.team_member_uuid] });
    const events = [
      makeEvent(org.id),
      ...Array.from({ length: 12 }, (_, i) => makeEvent(org.id, { scope: 'asset_ssl_changed', asset: `www${i}.acme.example`, title: `Certificate changed on www${i}.acme.example`, severity: i % 3 ? 'medium' : 'high' })),
    ];
    expect((await t.p.ingest({ events })).statusCode).toBe(202);
    await waitUntilSettled(t.p.db);
    expect((await t.p.admin('POST', `/admin/v1/notification-rules/${digest.id}/flush`)).statusCode).toBe(202);
    const mails = await t.smtp.waitFor(2);
    await waitUntilSettled(t.p.db);
    for (const mail of mails) {
      const report = await score(mail.raw);
      const fired = firedRules(report);
      if (process.env.SPAM_REPORT_DIR) writeFileSync(`${process.env.SPAM_REPORT_DIR}/${mail.messageId.replace(/[^\w.-]/g, '_')}.txt`, report);
      // The report was read (an empty list proves nothing otherwise); SPAM_REPORT_DIR keeps each report to look at.
      expect(report, mail.subject).toContain('Content analysis details');
      const positive = fired.filter((rule) => rule.points > 0 && !/^(DKIM|DMARC|SPF)_/.test(rule.rule));
      expect(positive, `${mail.subject}: ${JSON.stringify(fired)}`).toEqual([]);
    }
  });
});
