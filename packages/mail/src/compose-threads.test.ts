import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { composeInThreads } from './compose-threads';
import { composeInLoop, RenderFailedError, type ComposeRequest, type MailComposer } from './mail-composer';
import type { MimeMessage } from './mime-message';
import { compileTemplates, rendererFor, type MailTemplates } from './renderer';
import { PermanentMailError } from './send-errors';
import { makeContent, makeEvent } from './testing/fixtures';

/** A message's text without what differs between two composings of it: its Date and its boundary. */
function comparable({ envelope, raw }: MimeMessage): { envelope: MimeMessage['envelope']; text: string } {
  const text = raw.toString('latin1').replace(/^Date: .*$/m, 'Date: -').replaceAll(/=_notify_[0-9a-f-]{36}/g, '=_boundary');
  return { envelope, text };
}

function request(n: number, overrides: Partial<ComposeRequest> = {}): ComposeRequest {
  const rule = n % 5;
  const { recipient: _recipient, unsubscribeUrl: _unsubscribe, events, ...content } = makeContent({
    kind: 'digest',
    frequency: 'daily',
    ruleName: `Rule ${rule}`,
    // The members of a rule get the same events: ids that stay the same across its requests.
    events: Array.from({ length: 20 }, (_, i) => makeEvent({ id: `rule-${rule}-event-${i}`, asset: `host${i % 4}.example.com`, title: `Finding ${i} of rule ${rule}` })),
  });
  const email = `member-${n}@acme.example`;
  const unsubscribeUrl = `https://notify.example.com/unsubscribe/token-${n}`;
  return {
    content,
    events: JSON.stringify(events),
    eventCount: events.length,
    recipient: { email, name: n % 3 === 0 ? null : `Member ${n}` },
    unsubscribeUrl,
    shareKey: `rule-${rule}`,
    headers: { from: 'Notify <alerts@notify.example>', to: email, messageId: `<delivery-${n}@notify.example>`, list: { id: `rule-${rule}.rules.notify.example`, name: `Rule ${rule}`, unsubscribeUrl } },
    ...overrides,
  };
}

/** A request's events cut to its first. */
function firstEventOnly(each: ComposeRequest): Pick<ComposeRequest, 'events' | 'eventCount'> {
  return { events: JSON.stringify((JSON.parse(each.events) as unknown[]).slice(0, 1)), eventCount: 1 };
}

describe('composeInThreads', () => {
  let templates: MailTemplates;
  let threads: MailComposer;
  beforeAll(async () => {
    templates = await compileTemplates();
    threads = composeInThreads(templates, { threads: 2 });
  });
  afterAll(() => threads.close());

  it('composes the messages the event loop composes, many at once over two threads, the members of a rule sharing its render', async () => {
    const inLoop = composeInLoop(rendererFor(templates));
    // And alerts of one event, which the loop composes.
    const alert = (n: number) => {
      const each = request(n);
      return { ...each, shareKey: `alert-${n}`, content: { ...each.content, kind: 'instant' as const, frequency: 'instant' as const }, ...firstEventOnly(each) };
    };
    const requests = Array.from({ length: 40 }, (_, n) => (n % 8 === 7 ? alert(n) : request(n)));
    const fromThreads = await Promise.all(requests.map((each) => threads.compose(each)));
    for (const [n, each] of requests.entries()) {
      const expected = comparable(await inLoop.compose(each));
      expect(comparable(fromThreads[n]!)).toEqual(expected);
      // Each member's own name and link, not another's from a shared render.
      expect(expected.text).toContain(`token-${n}`);
      if (each.recipient.name) expect(expected.text).toContain(`Hello ${each.recipient.name},`);
    }
  });

  it("fails a request whose render fails with RenderFailedError, and a message that cannot be sent with the transport's mail error; the next request is composed", async () => {
    const broken = request(1, { shareKey: 'broken', events: 'null' });
    await expect(threads.compose(broken)).rejects.toBeInstanceOf(RenderFailedError);
    const unsendable = request(2, { headers: { ...request(2).headers, to: 'not an address' } });
    const refused = await threads.compose(unsendable).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(PermanentMailError);
    expect((refused as Error).message).toMatch(/invalid recipient address/);
    expect(comparable(await threads.compose(request(3))).text).toContain('token-3');
  });

  it('fails the requests of a thread that stops with RenderFailedError, says why, and starts another for the next request', async () => {
    // Templates a thread cannot prepare (a partial): each thread stops as it starts.
    const stops: Error[] = [];
    const failing = composeInThreads({ ...templates, digestHtml: `${templates.digestHtml}{{>partial}}` }, { threads: 1, onThreadError: (error) => stops.push(error) });
    try {
      const first = await failing.compose(request(4)).catch((error: unknown) => error);
      expect(first).toBeInstanceOf(RenderFailedError);
      expect((first as Error).message).toMatch(/compose thread stopped: .*partial/);
      const second = await failing.compose(request(5)).catch((error: unknown) => error);
      expect(second).toBeInstanceOf(RenderFailedError);
      expect(stops.length).toBeGreaterThanOrEqual(2);
      // An alert of one event is composed in the loop, not in a thread: it fails there, no thread stopping.
      const alert = await failing.compose(request(6, { shareKey: 'alert', ...firstEventOnly(request(6)) })).catch((error: unknown) => error);
      expect(alert).toBeInstanceOf(RenderFailedError);
      expect((alert as Error).message).toMatch(/^rendering failed: .*partial/);
      expect(stops.length).toBe(2);
    } finally {
      await failing.close();
    }
  });

  it('starts its threads with it, before any request: a thread that cannot start is told of at once', async () => {
    const stops: Error[] = [];
    const failing = composeInThreads({ ...templates, digestHtml: `${templates.digestHtml}{{>partial}}` }, { threads: 2, onThreadError: (error) => stops.push(error) });
    try {
      await vi.waitFor(() => expect(stops.length).toBe(2), { timeout: 20_000, interval: 50 });
      expect(stops[0]!.message).toMatch(/partial/);
    } finally {
      await failing.close();
    }
  });

  it('refuses requests once closed', async () => {
    const closing = composeInThreads(templates, { threads: 1 });
    expect(comparable(await closing.compose(request(6))).text).toContain('token-6');
    await closing.close();
    await expect(closing.compose(request(7))).rejects.toBeInstanceOf(RenderFailedError);
  });
});
