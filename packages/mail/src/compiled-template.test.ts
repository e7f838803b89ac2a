import Mustache from 'mustache';
import { SCOPES, SEVERITIES } from '@notify/core';
import { describe, expect, it } from 'vitest';
import { compileTokens, type Token } from './compiled-template';
import { compileMjml, escapeHtmlAscii } from './renderer';
import { DIGEST_MJML, INSTANT_MJML } from './templates/mjml-templates';
import { TEXT_TEMPLATE } from './templates/text-template';
import { makeContent, makeEvent } from './testing/fixtures';
import { buildView } from './view-model';

/** Mustache's own interpreter, as the renderer used it before templates were compiled. */
function interpreted(template: string, escape: (value: unknown) => string): (view: unknown) => string {
  const writer = new Mustache.Writer();
  const tokens = writer.parse(template);
  return (view) => writer.renderTokens(tokens, new Mustache.Context(view), undefined, template, { escape });
}

function compiled(template: string, escape: (value: unknown) => string): (view: unknown) => string {
  return compileTokens(new Mustache.Writer().parse(template) as Token[], escape);
}

/** A small deterministic generator, so a failure names the seed that made it. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('compileTokens', () => {
  it('writes what mustache writes for our templates, over many different e-mails', async () => {
    const templates = [
      { name: 'instant', template: await compileMjml(INSTANT_MJML), escape: escapeHtmlAscii },
      { name: 'digest', template: await compileMjml(DIGEST_MJML), escape: escapeHtmlAscii },
      { name: 'text', template: TEXT_TEMPLATE, escape: String },
    ].map((entry) => ({ ...entry, mustache: interpreted(entry.template, entry.escape), ours: compiled(entry.template, entry.escape) }));
    const words = ['', 'a', 'Zoë', '<b>&"\'`=/</b>', 'line\nbreak', '  spaced  ', '😀 emoji', 'x'.repeat(400)];
    for (let seed = 1; seed <= 300; seed++) {
      const next = random(seed);
      const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)]!;
      const events = Array.from({ length: Math.floor(next() * 12) }, () => makeEvent({
        asset: pick(['a.example.com', 'b.example.com', '', 'c.example.com']),
        assetType: pick(['subdomain', null, '']),
        severity: pick([...SEVERITIES, null]),
        tags: pick([[], ['prod'], ['prod', pick(words)], null as unknown as string[]]),
        title: pick(words),
        summary: pick([null, pick(words)]),
        url: pick([null, 'https://example.com/a?b=1&c=2', 'javascript:alert(1)']),
        data: pick([null, {}, { port: 22, service: pick(words) }, { nested: { deep: [1, 2] } }]),
      }));
      const kind = pick(['instant', 'digest'] as const);
      const content = makeContent({
        kind,
        frequency: kind === 'digest' ? pick(['hourly', 'daily', 'weekly', 'monthly'] as const) : 'instant',
        scope: pick(SCOPES),
        organizationName: pick(words),
        ruleName: pick(words),
        recipient: { email: 'm@example.com', name: pick([null, ...words]) },
        events,
        repeats: pick([0, 1, 3]),
        test: next() < 0.2,
        unsubscribeUrl: pick([undefined, '', 'https://notify.example.com/unsubscribe/t?x=1&y=2']),
        ...(next() < 0.5 && { period: { start: new Date('2026-11-20T09:00:00Z'), end: new Date('2026-11-21T09:00:00Z') } }),
      });
      const view = buildView(content);
      for (const { name, mustache, ours } of templates) {
        expect(ours(view), `${name}, seed ${seed}`).toBe(mustache(view));
      }
    }
  });

  it("follows mustache's lookup: the innermost view that has a name, dotted names, primitives and falsy values", () => {
    const cases: Array<[string, unknown]> = [
      ['{{#items}}{{name}}:{{outer}};{{/items}}', { outer: 'O', items: [{ name: 'a' }, { name: 'b', outer: 'inner' }, { name: null }] }],
      ['{{#list.length}}has {{list.length}}{{/list.length}}{{^list}}none{{/list}}', { list: [] }],
      ['{{#list.length}}has {{list.length}}{{/list.length}}{{^list}}none{{/list}}', { list: [1, 2] }],
      ['{{#s}}[{{.}}|{{length}}|{{s.length}}]{{/s}}', { s: 'abc' }],
      ['{{#n}}n={{.}}{{/n}}{{#zero}}zero{{/zero}}{{^zero}}no zero{{/zero}}', { n: 5, zero: 0 }],
      ['{{#flag}}yes {{x}}{{/flag}}{{^flag}}no{{/flag}}', { flag: true, x: 'X' }],
      ['{{#a}}{{#b}}{{c}}{{d.e}}{{/b}}{{/a}}', { c: 'top', d: { e: 'E' }, a: { b: [{ d: { e: 'inner' } }, { d: {} }, {}] } }],
      ['{{missing}}{{missing.deep}}{{#missing}}x{{/missing}}{{^missing}}y{{/missing}}', {}],
      ['{{undef}}|{{#o}}{{undef}}{{/o}}', { undef: 'outer', o: { undef: undefined } }],
      ['{{&raw}} {{esc}} {{! a comment }}{{=<% %>=}}<%esc%>', { raw: '<i>', esc: '<i>' }],
    ];
    for (const [template, view] of cases) {
      expect(compiled(template, escapeHtmlAscii)(view), template).toBe(interpreted(template, escapeHtmlAscii)(view));
    }
  });

  it('refuses what it does not support rather than write something else', () => {
    expect(() => compiled('{{>partial}}', String)).toThrow(/partial/);
    expect(() => compiled('{{#f}}x{{/f}}', String)({ f: () => () => 'y' })).toThrow(/higher-order/);
  });
});
