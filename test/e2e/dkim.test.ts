import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
// The DKIM verifier alone: mailauth's index also loads its BIMI code, which needs Node 22.
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { makeEvent, usePipeline } from '../support/pipeline';
import { waitUntilSettled } from '../support/wait';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PUBLIC_KEY_B64 = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');

describe('DKIM: with DKIM_DOMAIN, DKIM_SELECTOR and DKIM_PRIVATE_KEY every e-mail is signed', () => {
  const t = usePipeline({
    DKIM_DOMAIN: 'notify.test',
    DKIM_SELECTOR: 'alerts2026',
    DKIM_PRIVATE_KEY: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    PUBLIC_URL: 'https://notify.example.com',
  });

  /** Answers the DNS TXT query of the selector with the test's public key, and nothing else. */
  async function resolver(name: string, type: string): Promise<string[][]> {
    if (type === 'TXT' && name === 'alerts2026._domainkey.notify.test') return [[`v=DKIM1; k=rsa; p=${PUBLIC_KEY_B64}`]];
    throw Object.assign(new Error(`no ${type} record for ${name}`), { code: 'ENOTFOUND' });
  }

  it('signs From, Subject, Message-ID and both List-Unsubscribe headers; the signature verifies against the public key', async () => {
    const org = await t.p.createOrg();
    const member = org.members[0]!;
    await t.p.createRule(org.key, { name: 'Signed', scope: 'new_open_port_detected', members: [member.team_member_uuid] });
    expect((await t.p.ingest({ events: [makeEvent(org.id)] })).statusCode).toBe(202);
    await waitUntilSettled(t.p.db);
    const mail = t.smtp.received.find((received) => received.to.includes(member.email))!;
    const verdict = await dkimVerify(mail.raw, { resolver });
    expect(verdict.results).toHaveLength(1);
    const result = verdict.results[0]!;
    expect(result.status.result).toBe('pass');
    expect(result.signingDomain).toBe('notify.test');
    expect(result.selector).toBe('alerts2026');
    const signed = (result.signingHeaders!.keys as string).toLowerCase().split(': ').join(':').split(':');
    for (const name of ['from', 'subject', 'message-id', 'list-id', 'list-unsubscribe', 'list-unsubscribe-post', 'auto-submitted']) expect(signed).toContain(name);

    // A changed body no longer verifies: the check is real.
    const tampered = Buffer.from(mail.raw.toString('utf8').replace('Port 3389', 'Port 3390'));
    const broken = (await dkimVerify(tampered, { resolver })).results[0]!;
    expect(broken.status.result).not.toBe('pass');
  });
});
