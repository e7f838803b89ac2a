import type { ColumnDefault, Literal } from './shape';

/** Column defaults as PostgreSQL prints them (pg_get_expr), read back into literals where they are literals. */

/** A cast as pg_get_expr prints it: ::text, ::character varying, ::"Scope", ::timestamp(3) without time zone, ::text[]. */
const CAST =
  /^::(?:"(?:[^"]|"")+"|[a-z_][\w$]*)(?:\.(?:"(?:[^"]|"")+"|[a-z_][\w$]*))?(?:\s+(?:varying|precision))?(?:\(\s*\d+(?:\s*,\s*\d+)?\s*\))?(?:\s+with(?:out)?\s+time\s+zone)?((?:\[\])*)/i;
const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?/i;

export function parseDatabaseDefault(sql: string | null): ColumnDefault {
  if (sql === null) return { kind: 'none' };
  const trimmed = sql.trim();
  if (/^nextval\(/i.test(trimmed)) return { kind: 'autoincrement' };
  if (/^(?:CURRENT_TIMESTAMP(?:\(\d+\))?|now\(\))$/i.test(trimmed)) return { kind: 'now' };
  const literal = parseLiteralDefault(trimmed);
  if (literal?.kind === 'value' && !literal.isArray && literal.values[0]?.text === 'null' && !literal.values[0].quoted) {
    return { kind: 'none' };
  }
  return literal ?? { kind: 'expression', sql: trimmed };
}

/** Literals, possibly cast, possibly in ARRAY[...]; null when the default is any other expression. */
function parseLiteralDefault(sql: string): ColumnDefault | null {
  const parser = new LiteralParser(sql);
  const result = parser.parseDefault();
  return result && parser.atEnd() ? result : null;
}

class LiteralParser {
  private rest: string;

  constructor(sql: string) {
    this.rest = sql;
  }

  atEnd(): boolean {
    return this.rest.trim() === '';
  }

  parseDefault(): ColumnDefault | null {
    if (this.take(/^ARRAY\s*\[/i)) {
      const values: Literal[] = [];
      while (!this.take(/^\s*\]/)) {
        if (values.length && !this.take(/^\s*,\s*/)) return null;
        const value = this.parseScalar();
        if (!value) return null;
        values.push(value.literal);
      }
      this.skipCasts();
      return { kind: 'value', isArray: true, values };
    }
    const scalar = this.parseScalar();
    if (!scalar) return null;
    // '{a,b}'::text[] is the other way PostgreSQL spells an array.
    if (scalar.arrayCast && scalar.literal.quoted) {
      const values = parseArrayText(scalar.literal.text);
      return values && { kind: 'value', isArray: true, values };
    }
    return { kind: 'value', isArray: false, values: [scalar.literal] };
  }

  private parseScalar(): { literal: Literal; arrayCast: boolean } | null {
    this.take(/^\s+/);
    if (this.take(/^\(/)) {
      const inner = this.parseScalar();
      if (!inner || !this.take(/^\s*\)/)) return null;
      return { literal: inner.literal, arrayCast: this.skipCasts() || inner.arrayCast };
    }
    let literal: Literal | null = null;
    const string = this.take(/^E?'((?:[^']|'')*)'/);
    if (string) literal = { text: unescapeString(string[1] ?? '', string[0].startsWith('E')), quoted: true };
    const number = literal ? null : this.take(NUMBER);
    if (number) literal = { text: number[0], quoted: false };
    const keyword = literal ? null : this.take(/^(?:true|false|NULL)\b/i);
    if (keyword) literal = { text: keyword[0].toLowerCase(), quoted: false };
    return literal && { literal, arrayCast: this.skipCasts() };
  }

  /** Skips any casts; true if one of them is to an array type. */
  private skipCasts(): boolean {
    let arrayCast = false;
    for (let cast = this.take(CAST); cast; cast = this.take(CAST)) arrayCast = arrayCast || Boolean(cast[1]);
    return arrayCast;
  }

  private take(pattern: RegExp): RegExpExecArray | null {
    const match = pattern.exec(this.rest);
    if (match) this.rest = this.rest.slice(match[0].length);
    return match;
  }
}

function unescapeString(body: string, escapeSyntax: boolean): string {
  const text = body.replaceAll("''", "'");
  return escapeSyntax ? text.replace(/\\(.)/g, '$1') : text;
}

/** PostgreSQL's array text: {a,"b c",NULL}. */
function parseArrayText(text: string): Literal[] | null {
  const body = /^\{(.*)\}$/s.exec(text)?.[1];
  if (body === undefined) return null;
  if (body === '') return [];
  const items: Literal[] = [];
  const item = /\s*(?:"((?:[^"\\]|\\.)*)"|([^,]*?))\s*(?:,|$)/gy;
  for (let match = item.exec(body); match && item.lastIndex <= body.length; match = item.exec(body)) {
    const quoted = match[1];
    items.push(
      quoted !== undefined ? { text: quoted.replace(/\\(.)/g, '$1'), quoted: true } : { text: match[2] ?? '', quoted: true },
    );
    if (item.lastIndex === body.length) break;
  }
  return items;
}
