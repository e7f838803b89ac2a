import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DELIVERY_KINDS } from './deliveries/delivery-log';
import { SILENCE_STATUSES } from './silences';

/**
 * GLOSSARY.md names every value PostgreSQL stores for a status or kind: each enum of the Prisma
 * schema under its word (enum `MatchStatus` under **match**, `Scope` under **scope**), and the
 * statuses the code reckons as strings beside them. A value added to the schema without a word in
 * the glossary fails here.
 */
const read = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8');
const schema = read('../../../prisma/schema.prisma');
const glossary = read('../GLOSSARY.md');

/** Each `enum Name { … }` of the schema with its values (comments and `@@` attributes left out). */
function schemaEnums(text: string): Map<string, string[]> {
  const enums = new Map<string, string[]>();
  for (const [, name, body] of text.matchAll(/^enum\s+(\w+)\s*\{([^}]*)\}/gm)) {
    const values = body!
      .split('\n')
      .map((line) => line.replace(/\/\/.*$/, '').trim())
      .filter((line) => line !== '' && !line.startsWith('@@'))
      .map((line) => line.split(/\s+/)[0]!);
    enums.set(name!, values);
  }
  return enums;
}

/** The glossary's word for an enum: `MatchStatus` → `match`, `DeliveryStatus` → `delivery`, `Scope` → `scope`. */
function wordOf(enumName: string): string {
  return enumName.replace(/Status$/, '').replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
}

/**
 * Each entry of the glossary by its word: from a line that starts with `**word**` up to the next
 * such line or heading, so a status listed under the wrong word does not count.
 */
function glossaryEntries(text: string): Map<string, string> {
  const entries = new Map<string, string>();
  let word: string | undefined;
  let lines: string[] = [];
  const close = () => {
    if (word !== undefined) entries.set(word, lines.join('\n'));
  };
  for (const line of text.split('\n')) {
    const start = /^\*\*([^*]+)\*\*/.exec(line);
    if (start || line.startsWith('#')) {
      close();
      word = start ? start[1]!.trim().toLowerCase() : undefined;
      lines = [];
    }
    if (word !== undefined) lines.push(line);
  }
  close();
  return entries;
}

/** The values missing from an entry, each to be written as code (`value`). */
function missing(entry: string | undefined, values: readonly string[]): string[] {
  return values.filter((value) => !entry?.includes(`\`${value}\``));
}

const enums = schemaEnums(schema);
const entries = glossaryEntries(glossary);

describe('GLOSSARY.md', () => {
  it('reads the enums of the Prisma schema', () => {
    // The parsing itself: the statuses the pipeline is built on are there.
    expect(enums.get('MatchStatus')).toEqual(expect.arrayContaining(['pending', 'delivered', 'dropped', 'silenced', 'repeat']));
    expect(enums.get('DeliveryStatus')).toEqual(expect.arrayContaining(['pending', 'sending', 'sent', 'failed', 'cancelled', 'suppressed']));
    expect(entries.has('match')).toBe(true);
  });

  it.each([...enums].map(([name, values]) => [name, wordOf(name), values] as const))(
    'names every value of enum %s under **%s**',
    (_name, word, values) => {
      expect(entries.has(word), `GLOSSARY.md needs an entry **${word}** for the schema's enum`).toBe(true);
      expect(missing(entries.get(word), values), `values missing from the **${word}** entry`).toEqual([]);
    },
  );

  it('names the statuses and kinds the code reckons as strings', () => {
    expect(missing(entries.get('silence'), SILENCE_STATUSES), 'silence statuses missing from **silence**').toEqual([]);
    expect(missing(entries.get('delivery'), DELIVERY_KINDS), 'delivery kinds missing from **delivery**').toEqual([]);
  });
});
