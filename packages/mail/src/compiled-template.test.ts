import fc from 'fast-check';
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

describe('compileTokens', () => {
  it('writes what mustache writes for our templates, over many different e-mails', async () => {
    const templates = [
      { name: 'instant', template: await compileMjml(INSTANT_MJML), escape: escapeHtmlAscii },
      { name: 'digest', template: await compileMjml(DIGEST_MJML), escape: escapeHtmlAscii },
      { name: 'text', template: TEXT_TEMPLATE, escape: String },
    ].map((entry) => ({ ...entry, mustache: interpreted(entry.template, entry.escape), ours: compiled(entry.template, entry.escape) }));
    const word = fc.constantFrom('', 'a', 'Zoë', '<b>&"\'`=/</b>', 'line\nbreak', '  spaced  ', '😀 emoji', 'x'.repeat(400));
    const event = fc.record({
      asset: fc.constantFrom('a.example.com', 'b.example.com', '', 'c.example.com'),
      assetType: fc.constantFrom('subdomain', null, ''),
      severity: fc.constantFrom(...SEVERITIES, null),
      tags: fc.oneof(fc.constant(null as unknown as string[]), fc.array(word, { maxLength: 3 })),
      title: word,
      summary: fc.option(word),
      url: fc.constantFrom(null, 'https://example.com/a?b=1&c=2', 'javascript:alert(1)'),
      data: fc.constantFrom(null, {}, { port: 22, service: 'ssh <x>' }, { nested: { deep: [1, 2] } }),
    }).map((overrides) => makeEvent(overrides));
    const content = fc.record({
      kind: fc.constantFrom('instant', 'digest'),
      frequency: fc.constantFrom('hourly', 'daily', 'weekly', 'monthly'),
      scope: fc.constantFrom(...SCOPES),
      organizationName: word,
      ruleName: word,
      name: fc.option(word),
      events: fc.array(event, { maxLength: 12 }),
      repeats: fc.constantFrom(0, 1, 3),
      test: fc.boolean(),
      unsubscribeUrl: fc.constantFrom(undefined, '', 'https://notify.example.com/unsubscribe/t?x=1&y=2'),
      period: fc.boolean(),
    }).map(({ kind, frequency, name, period, ...rest }) => makeContent({
      ...rest,
      kind,
      frequency: kind === 'digest' ? frequency : 'instant',
      recipient: { email: 'm@example.com', name },
      ...(period && { period: { start: new Date('2026-11-20T09:00:00Z'), end: new Date('2026-11-21T09:00:00Z') } }),
    }));
    fc.assert(fc.property(content, (mail) => {
      const view = buildView(mail);
      for (const { name, mustache, ours } of templates) expect(ours(view), name).toBe(mustache(view));
    }), { numRuns: 300 });
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
