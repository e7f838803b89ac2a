import { describe, expect, it } from 'vitest';
import type { ReceivedMail } from '@notify/mail/testing';
import { makeEvent, usePipeline } from '../support/pipeline';
import { waitUntilSettled } from '../support/wait';

const RULES = '/v1/platform/notification-rules';

describe('being delivered: List-* and Auto-Submitted headers, RFC 8058 one-click unsubscribe', () => {
  const t = usePipeline({ PUBLIC_URL: 'https://notify.example.com' });

  const mailsTo = (email: string): ReceivedMail[] => t.smtp.received.filter((mail) => mail.to.includes(email));
  /** A header as the message carries it (mailparser folds the List-* ones into an object). */
  const header = (mail: ReceivedMail, name: string) => {
    const line = mail.parsed.headerLines.find((candidate) => candidate.key === name)?.line ?? '';
    return line.slice(line.indexOf(':') + 1).trim();
  };
  const inject = (method: 'GET' | 'POST', url: string, form?: string) =>
    t.p.process.app!.inject({ method, url, ...(form === undefined ? {} : { payload: form, headers: { 'content-type': 'application/x-www-form-urlencoded' } }) });
  async function digestRound(org: { id: string }, ruleId: string, title: string): Promise<{ matches: number; deliveries: number }> {
    expect((await t.p.ingest({ events: [makeEvent(org.id, { scope: 'asset_dns_changed', title })] })).statusCode).toBe(202);
    await waitUntilSettled(t.p.db);
    const flush = await t.p.admin('POST', `/admin/v1/notification-rules/${ruleId}/flush`);
    await waitUntilSettled(t.p.db);
    return flush.json() as { matches: number; deliveries: number };
  }
  const subscribed = async (key: string, ruleId: string) =>
    Object.fromEntries(((await t.p.api(key, 'GET', `${RULES}/${ruleId}`)).json().members as Array<{ email: string; subscribed: boolean }>).map((m) => [m.email, m.subscribed]));

  it('carries the headers, and the link opts the member out of the rule at once, a GET alone changing nothing', async () => {
    const org = await t.p.createOrg({ memberCount: 2, name: 'Acme <Security>' });
    const [a, b] = org.members;
    const rule = await t.p.createRule(org.key, { name: 'DNS "changes"', scope: 'asset_dns_changed', frequency: 'daily', members: [a!.team_member_uuid, b!.team_member_uuid] });
    expect(await digestRound(org, rule.id, 'first')).toEqual({ matches: 1, deliveries: 2 });
    const [mail] = mailsTo(a!.email);
    expect(header(mail!, 'auto-submitted')).toBe('auto-generated');
    expect(header(mail!, 'list-id')).toContain(`<${rule.id}.rules.notify.test>`);
    expect(header(mail!, 'list-unsubscribe-post')).toBe('List-Unsubscribe=One-Click');
    const link = /<(https:\/\/notify\.example\.com\/unsubscribe\/[A-Za-z0-9_-]{64})>/.exec(header(mail!, 'list-unsubscribe'))?.[1];
    expect(link).toBeDefined();
    // The footer links to the same page, in both parts.
    expect(mail!.text).toContain(link!);
    expect(mail!.html.replaceAll('&#x2F;', '/')).toContain(link!);
    const path = new URL(link!).pathname;

    const shown = await inject('GET', path);
    expect(shown.statusCode).toBe(200);
    expect(shown.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(shown.body).toContain('DNS &#34;changes&#34;');
    expect(shown.body).toContain('Acme &#60;Security&#62;');
    expect(shown.body).toContain('>Unsubscribe</button>');
    expect(await subscribed(org.key, rule.id)).toEqual({ [a!.email]: true, [b!.email]: true });

    const oneClick = await inject('POST', path, 'List-Unsubscribe=One-Click');
    expect(oneClick.statusCode).toBe(200);
    expect(oneClick.body).toContain('You are unsubscribed.');
    expect(oneClick.body).toContain('>Resubscribe</button>');
    expect((await inject('POST', path, 'List-Unsubscribe=One-Click')).statusCode).toBe(200);
    expect(await subscribed(org.key, rule.id)).toEqual({ [a!.email]: false, [b!.email]: true });
    // A rule update keeps the opt-out.
    expect((await t.p.api(org.key, 'PUT', `${RULES}/${rule.id}`, { name: 'DNS', members: [a!.team_member_uuid, b!.team_member_uuid], enabled: true })).statusCode).toBe(200);
    expect(await subscribed(org.key, rule.id)).toEqual({ [a!.email]: false, [b!.email]: true });

    expect(await digestRound(org, rule.id, 'second')).toEqual({ matches: 1, deliveries: 1 });
    expect(mailsTo(a!.email)).toHaveLength(1);
    expect(mailsTo(b!.email)).toHaveLength(2);

    const again = await inject('POST', path, 'action=resubscribe');
    expect(again.body).toContain('You are subscribed again.');
    expect(await digestRound(org, rule.id, 'third')).toEqual({ matches: 1, deliveries: 2 });
    expect(mailsTo(a!.email)).toHaveLength(2);
  });

  it('refuses a forged or broken link with a page that says so, changing nothing', async () => {
    const org = await t.p.createOrg();
    const member = org.members[0]!;
    const rule = await t.p.createRule(org.key, { name: 'R', scope: 'asset_dns_changed', frequency: 'daily', members: [member.team_member_uuid] });
    await digestRound(org, rule.id, 'one');
    const link = /<([^>]+)>/.exec(header(mailsTo(member.email)[0]!, 'list-unsubscribe'))![1]!;
    const token = new URL(link).pathname.split('/').pop()!;
    const forged = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
    for (const path of [`/unsubscribe/${forged}`, '/unsubscribe/x', `/unsubscribe/${'A'.repeat(64)}`]) {
      for (const method of ['GET', 'POST'] as const) {
        const response = await inject(method, path, method === 'POST' ? 'List-Unsubscribe=One-Click' : undefined);
        expect(response.statusCode).toBe(404);
        expect(response.body).toContain('This link is not valid');
      }
    }
    expect(await subscribed(org.key, rule.id)).toEqual({ [member.email]: true });
  });
});
