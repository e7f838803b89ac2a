import { describe, expect, it } from 'vitest';
import { ValidationFailed, type FieldIssue } from '../errors';
import { collapseDuplicateEvents, parseIngestRequest } from './envelope';
import { INGEST_LIMITS, type IncomingEvent } from './event';

const parseIngestBody = (body: unknown) => parseIngestRequest(body).events;

const ORG = '6f1c2a4e-8b7d-4c3a-9e2f-1a2b3c4d5e6f';

function wire(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'evt-1',
    organization_id: ORG,
    scope: 'new_open_port_detected',
    occurred_at: '2026-11-20T10:15:00Z',
    asset: 'mail.example.com',
    title: 'Port 3389 open',
    ...overrides,
  };
}

function issuesOf(body: unknown): FieldIssue[] {
  try {
    parseIngestBody(body);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationFailed);
    return (error as ValidationFailed).parameters;
  }
  throw new Error('expected a ValidationFailed');
}

function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 1; i < levels; i++) value = { a: value };
  return value;
}

describe('parseIngestRequest: shapes', () => {
  it('reads a body without an events key as one event, normalized', () => {
    const request = parseIngestRequest(wire({
      organization_id: ORG.toUpperCase(),
      asset: '  mail.example.com ',
      asset_type: null,
      tags: ['prod', ' prod ', 'eu'],
      summary: ' line one\nline two ',
      data: { port: 3389 },
      unknown_key: 'ignored',
    }));
    expect(request.shape).toBe('single');
    expect(request.events).toEqual<IncomingEvent[]>([{
      id: 'evt-1',
      organizationId: ORG,
      scope: 'new_open_port_detected',
      occurredAt: new Date('2026-11-20T10:15:00.000Z'),
      asset: 'mail.example.com',
      assetType: null,
      severity: null,
      tags: ['prod', 'eu'],
      title: 'Port 3389 open',
      summary: 'line one\nline two',
      url: null,
      fingerprint: null,
      data: { port: 3389 },
    }]);
  });

  it('keeps ids exactly as sent', () => {
    expect(parseIngestBody(wire({ id: ' a b ' }))[0]!.id).toBe(' a b ');
  });

  it('reads {"events": [...]} as a batch, keeping order and repeats', () => {
    const request = parseIngestRequest({ events: [wire({ id: 'a' }), wire({ id: 'b' }), wire({ id: 'a' })] });
    expect(request.shape).toBe('batch');
    expect(request.events.map((event) => event.id)).toEqual(['a', 'b', 'a']);
  });

  it('names params by field for one event and by index in a batch', () => {
    expect(issuesOf(wire({ scope: 'nope' }))).toEqual([{ param: 'scope', details: ['"nope" is not a valid choice.'] }]);
    expect(issuesOf({ events: [wire(), wire({ scope: 'nope', tags: ['ok', ''] })] })).toEqual([
      { param: 'events[1].scope', details: ['"nope" is not a valid choice.'] },
      { param: 'events[1].tags[1]', details: ['This field may not be blank.'] },
    ]);
  });

  it.each([
    [null, 'Invalid data. Expected a dictionary, but got null.'],
    [[wire()], 'Invalid data. Expected a dictionary, but got list.'],
    ['text', 'Invalid data. Expected a dictionary, but got str.'],
  ])('refuses a body that is not an object: %j', (body, message) => {
    expect(issuesOf(body)).toEqual([{ param: 'body', details: [message] }]);
  });

  it.each([
    [[], 'This list may not be empty.'],
    [null, 'This field may not be null.'],
    [{}, 'Expected a list of items but got type "dict".'],
    [Array.from({ length: INGEST_LIMITS.maxEvents + 1 }, () => wire()), 'Ensure this field has no more than 1000 elements.'],
  ])('checks the events list (%#)', (events, message) => {
    expect(issuesOf({ events })).toEqual([{ param: 'events', details: [message] }]);
  });

  it('names a batch item that is not an object', () => {
    expect(issuesOf({ events: [wire(), 'x', null] })).toEqual([
      { param: 'events[1]', details: ['Invalid data. Expected a dictionary, but got str.'] },
      { param: 'events[2]', details: ['Invalid data. Expected a dictionary, but got null.'] },
    ]);
  });

  it('reports every problem, and at most 50', () => {
    expect(issuesOf({})).toEqual(['id', 'organization_id', 'scope', 'occurred_at', 'asset', 'title'].map((param) => ({ param, details: ['This field is required.'] })));
    const many = issuesOf({ events: Array.from({ length: 1000 }, () => wire({ title: undefined })) });
    expect(many).toHaveLength(INGEST_LIMITS.maxIssues + 1);
    expect(many[49]).toEqual({ param: 'events[49].title', details: ['This field is required.'] });
    expect(many[50]).toEqual({ param: 'body', details: ['Only the first 50 problems are reported.'] });
  });
});

describe('parseIngestRequest: fields', () => {
  it('answers an overlong list with one message, without walking it', () => {
    const tags = Array.from({ length: 1_000_000 }, () => 0);
    // Walked, it would answer with its first 50 items' problems.
    expect(issuesOf(wire({ tags, title: '' }))).toEqual([
      { param: 'tags', details: ['Ensure this field has no more than 100 elements.'] },
      { param: 'title', details: ['This field may not be blank.'] },
    ]);
  });

  it('counts characters, not UTF-16 units', () => {
    const emoji = '😀';
    expect(parseIngestBody(wire({ id: emoji.repeat(128) }))[0]!.id).toBe(emoji.repeat(128));
    expect(issuesOf(wire({ id: emoji.repeat(129) }))).toEqual([{ param: 'id', details: ['Ensure this field has no more than 128 characters.'] }]);
  });

  it('refuses text PostgreSQL cannot store, in every field and inside data', () => {
    expect(issuesOf(wire({ title: 'a\u0000b' }))).toEqual([{ param: 'title', details: ['Null characters are not allowed.'] }]);
    expect(issuesOf(wire({ summary: 'a\u0000b' }))).toEqual([{ param: 'summary', details: ['Null characters are not allowed.'] }]);
    expect(issuesOf(wire({ id: 'a\ud800' }))).toEqual([{ param: 'id', details: ['Unpaired surrogate characters are not allowed.'] }]);
    expect(issuesOf(wire({ data: { deep: ['x\u0000'] } }))).toEqual([{ param: 'data', details: ['Null characters are not allowed.'] }]);
    expect(issuesOf(wire({ data: { 'k\u0000': 1 } }))).toEqual([{ param: 'data', details: ['Null characters are not allowed.'] }]);
    expect(issuesOf(wire({ data: { k: '\udc00' } }))).toEqual([{ param: 'data', details: ['Unpaired surrogate characters are not allowed.'] }]);
  });

  it('allows line breaks in summary only', () => {
    expect(parseIngestBody(wire({ summary: 'a\r\n\tb' }))[0]!.summary).toBe('a\r\n\tb');
    expect(issuesOf(wire({ title: 'a\nb', asset: 'a\u0085b', tags: ['a\tb'] }))).toEqual([
      { param: 'asset', details: ['Control characters are not allowed.'] },
      { param: 'tags[0]', details: ['Control characters are not allowed.'] },
      { param: 'title', details: ['Control characters are not allowed.'] },
    ]);
    expect(issuesOf(wire({ summary: 'a\u0007' }))).toEqual([{ param: 'summary', details: ['Control characters are not allowed.'] }]);
  });

  it('measures data in UTF-8 bytes of compact JSON', () => {
    const overhead = JSON.stringify({ k: '' }).length;
    const twoByte = 'é';
    const fits = { k: twoByte.repeat((INGEST_LIMITS.dataMaxBytes - overhead) / 2) };
    expect(parseIngestBody(wire({ data: fits }))[0]!.data).toEqual(fits);
    const over = { k: `${twoByte.repeat((INGEST_LIMITS.dataMaxBytes - overhead) / 2)}a` };
    expect(issuesOf(wire({ data: over }))).toEqual([{ param: 'data', details: ['Ensure this field has no more than 16384 bytes when serialized as JSON.'] }]);
  });

  it('limits data to 8 levels, arrays included', () => {
    expect(parseIngestBody(wire({ data: nested(8) }))[0]!.data).toEqual(nested(8));
    const message = 'Ensure this field is nested no more than 8 levels deep.';
    expect(issuesOf(wire({ data: nested(9) }))).toEqual([{ param: 'data', details: [message] }]);
    expect(issuesOf(wire({ data: { a: [[[[[[[[1]]]]]]]] } }))).toEqual([{ param: 'data', details: [message] }]);
    expect(parseIngestBody(wire({ data: { a: [[[[[[1]]]]]] } }))).toHaveLength(1);
  });

  it('takes only JSON in data (in-platform callers can pass anything)', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const value of [Number.NaN, Infinity, undefined, new Date(), () => 1, 10n, new Map()]) {
      expect(issuesOf(wire({ data: { value } })), String(value)).toEqual([{ param: 'data', details: ['Value must be valid JSON.'] }]);
    }
    expect(issuesOf(wire({ data: cyclic }))).toEqual([{ param: 'data', details: ['Ensure this field is nested no more than 8 levels deep.'] }]);
  });

  it('never runs getters of the input', () => {
    let ran = false;
    const event = wire();
    Object.defineProperty(event, 'title', { enumerable: true, get: () => { ran = true; return 'x'; } });
    expect(issuesOf(event)).toEqual([{ param: 'title', details: ['Not a valid string.'] }]);
    expect(ran).toBe(false);
  });

  it('accepts every documented date-time form and refuses impossible dates', () => {
    expect(parseIngestBody(wire({ occurred_at: '2026-11-20T11:15:00.123456+01:00' }))[0]!.occurredAt.toISOString()).toBe('2026-11-20T10:15:00.123Z');
    expect(parseIngestBody(wire({ occurred_at: '2026-11-20T10:15' }))[0]!.occurredAt.toISOString()).toBe('2026-11-20T10:15:00.000Z');
    // The widest real offsets, +14:00 (Kiribati) and -12:00, are times; +20:00 is not (below).
    expect(parseIngestBody(wire({ occurred_at: '2026-11-20T10:15:00+14:00' }))[0]!.occurredAt.toISOString()).toBe('2026-11-19T20:15:00.000Z');
    for (const value of ['2026-02-30T00:00:00Z', '2026-11-20T24:00:00Z', 'yesterday', 1763633700, '2026-11-20T10:15:00+20:00', '2026-11-20T10:15:00-0960']) {
      expect(issuesOf(wire({ occurred_at: value }))).toEqual([{ param: 'occurred_at', details: [expect.stringMatching(/^Datetime has wrong format/)] }]);
    }
  });
});

describe('collapseDuplicateEvents', () => {
  it('keeps the first event of each (organization, id)', () => {
    const other = '0b6f6a52-6d0c-4f7e-9d55-2f0f5a1b2c3d';
    const events = parseIngestBody({ events: [wire({ title: 'first' }), wire({ title: 'second' }), wire({ organization_id: other })] });
    expect(collapseDuplicateEvents(events).map((event) => [event.organizationId, event.title])).toEqual([[ORG, 'first'], [other, 'Port 3389 open']]);
  });
});
