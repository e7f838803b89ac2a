import Mustache from 'mustache';
import type { MailContent, MailRecipient, MailRenderer, RenderedMail } from './mail-content';
import { DIGEST_MJML, INSTANT_MJML } from './templates/mjml-templates';
import { TEXT_TEMPLATE } from './templates/text-template';
import type { MailView } from './view-model';
import { buildView, recipientName } from './view-model';
import { compileTokens, type Token } from './compiled-template';

type Fill = (view: MailView) => string;

export async function compileMjml(source: string): Promise<string> {
  // Loaded when first compiling: a compose thread fills templates compiled by its process (rendererFor) and never loads MJML.
  const { default: mjml2html } = await import('mjml');
  // `strict` turns a template mistake into a start-up failure instead of a broken e-mail.
  const result = await mjml2html(source, { validationLevel: 'strict', keepComments: false, fonts: {} });
  return result.html;
}

/** Both e-mails' HTML templates, compiled from MJML (asciiHtml), to be filled per message. */
export interface MailTemplates {
  instantHtml: string;
  digestHtml: string;
}

/** Compiles both MJML templates to HTML, once (MJML 5 compiles asynchronously, hence the promise). */
export async function compileTemplates(): Promise<MailTemplates> {
  const [instantHtml, digestHtml] = await Promise.all([compileMjml(INSTANT_MJML), compileMjml(DIGEST_MJML)]);
  return { instantHtml: asciiHtml(instantHtml), digestHtml: asciiHtml(digestHtml) };
}

/**
 * Makes each text token's value one flat string. Mustache's parser builds a text run by appending
 * it a character at a time, which V8 keeps as a tree of one-character strings; every message that
 * copied such a run walked that tree again (measured on a digest rendered and copied to a Buffer:
 * see commit ef4d1ae).
 */
function flattenText(tokens: Token[]): void {
  for (const token of tokens) {
    if (token[0] === 'text') {
      const flat = Buffer.from(token[1], 'utf8').toString('utf8');
      if (flat === token[1]) token[1] = flat;
    }
    if (Array.isArray(token[4])) flattenText(token[4]);
  }
}

/**
 * Parses a mustache template once (mustache's own parser) and compiles it (compileTokens): each
 * message only fills it, `escape` writing every value.
 */
function prepare(template: string, escape: (value: unknown) => string): Fill {
  const tokens = new Mustache.Writer().parse(template) as Token[];
  flattenText(tokens);
  return compileTokens(tokens, escape);
}

/** What mustache's own escape replaces, as it writes it; and any line break as CRLF. */
const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '/': '&#x2F;', '`': '&#x60;', '=': '&#x3D;',
  '\n': '\r\n', '\r': '\r\n', '\r\n': '\r\n',
};
/** A character beyond ASCII: a surrogate pair whole, or one UTF-16 unit (a lone surrogate too). */
const BEYOND_ASCII = '[\\ud800-\\udbff][\\udc00-\\udfff]|[\\u0080-\\uffff]';
const BEYOND_ASCII_OR_LF = new RegExp(`${BEYOND_ASCII}|\\n`, 'g');
const HTML_ESCAPED = new RegExp(`[&<>"'\`=/\\n]|\\r\\n?|${BEYOND_ASCII}`, 'g');
/** HTML_ESCAPED without its `g`, for a test that keeps no position between calls. */
const HTML_ESCAPED_ONE = new RegExp(HTML_ESCAPED.source);

/** The ASCII characters escapeHtmlAscii replaces (HTML_ESCAPED), by code: 1. */
const ESCAPED_ASCII = Uint8Array.from({ length: 128 }, (_, code) => (HTML_ESCAPED_ONE.test(String.fromCharCode(code)) ? 1 : 0));

/** A character as a numeric character reference, which a browser reads as the character itself. */
const reference = (character: string): string => `&#${character.codePointAt(0)};`;

/**
 * Mustache's HTML escape, every character beyond ASCII as a numeric reference, and every line
 * break as CRLF (an HTML parser reads CR, LF and CRLF alike). With the templates' own text made
 * the same (asciiHtml), an e-mail's HTML is ASCII with CRLF lines, as a 7bit part carries it: the
 * message is composed without another pass over it (see sevenBitBody), and V8 holds it one byte a
 * character.
 */
export function escapeHtmlAscii(value: unknown): string {
  const text = String(value);
  // Most values (a host, a port, a title) have nothing to escape: a look at each character is
  // cheaper than the replace (measured on a digest's values: see commit df5ba26).
  let i = 0;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (code >= 0x80 || ESCAPED_ASCII[code] === 1) break;
    i++;
  }
  if (i === text.length) return text;
  let beyondAscii = false;
  const escaped = text.replace(HTML_ESCAPED, (found) => {
    const simple = HTML_ESCAPES[found];
    if (simple !== undefined) return simple;
    beyondAscii = true;
    return reference(found);
  });
  return beyondAscii ? oneByte(escaped) : escaped;
}

/**
 * An ASCII string held one byte a character. V8 keeps the result of replacing in a string of two
 * bytes a character (any beyond U+00FF, like "—") two bytes wide, ASCII or not, and a message with
 * one such piece became two bytes wide whole, and every pass over a digest's HTML then cost many
 * times as much.
 */
function oneByte(ascii: string): string {
  return Buffer.from(ascii, 'latin1').toString('latin1');
}

/**
 * Where spaces and tabs at a line's start or end are text a reader shows (pre, pre-wrap,
 * break-spaces, a textarea). Anywhere else (normal text, pre-line, between tags, in a tag) a line
 * break with spaces around it reads as the line break alone.
 */
const KEEPS_SPACES = /<pre\b|<textarea\b|white-space:\s*(?:pre|pre-wrap|break-spaces)\s*[;"'}!]/i;

/**
 * The templates' HTML with each character beyond ASCII a numeric reference, each LF a CRLF (MJML
 * writes LF), and no spaces or tabs around a line break: MJML indents its output, a good share of
 * a digest's HTML (see commit 3c31e74), which every e-mail would carry and every pass over it
 * read. A template whose spaces are its text (KEEPS_SPACES) is refused at start rather than shown
 * otherwise.
 */
export function asciiHtml(html: string): string {
  if (KEEPS_SPACES.test(html)) throw new Error('a template keeps its spaces (pre, pre-wrap, textarea): its indentation cannot be trimmed');
  const trimmed = html.replace(/[ \t]*\n[ \t]*/g, '\n');
  return oneByte(trimmed.replace(BEYOND_ASCII_OR_LF, (found) => (found === '\n' ? '\r\n' : reference(found))));
}

/**
 * Where a recipient's own text goes in an e-mail rendered for any recipient: control characters,
 * which no value the e-mail shows can hold (sanitize removes them) and both escapes leave as they are.
 */
const NAME_MARK = '\u0001name\u0001';
const LINK_MARK = '\u0001link\u0001';

/** Compiles both MJML templates (compileTemplates) and returns a renderer that only fills them. */
export async function createMailRenderer(): Promise<MailRenderer> {
  return rendererFor(await compileTemplates());
}

/** A renderer that fills compiled templates (compileTemplates); mustache HTML-escapes every value it inserts. */
export function rendererFor(templates: MailTemplates): MailRenderer {
  const instant = prepare(templates.instantHtml, escapeHtmlAscii);
  const digest = prepare(templates.digestHtml, escapeHtmlAscii);
  const text = prepare(TEXT_TEMPLATE, String);

  const fill = (kind: MailContent['kind'], view: MailView): RenderedMail =>
    ({ subject: view.subject, html: (kind === 'digest' ? digest : instant)(view), text: text(view) });

  return {
    render: (content) => fill(content.kind, buildView(content)),
    renderShared(content) {
      const view = buildView({ ...content, recipient: { email: '' } });
      // One render for each way the template's sections go (a name or none, a link or none), with
      // marks where the recipient's own text goes; each recipient's e-mail then only replaces them.
      const variants = new Map<string, RenderedMail>();
      return {
        for(recipient: MailRecipient): RenderedMail {
          const name = recipientName(recipient.name);
          const link = recipient.unsubscribeUrl || null;
          const shape = `${name === null ? '' : 'n'}${link === null ? '' : 'l'}`;
          let marked = variants.get(shape);
          if (!marked) {
            marked = fill(content.kind, { ...view, recipientName: name === null ? null : NAME_MARK, unsubscribeUrl: link === null ? null : LINK_MARK });
            variants.set(shape, marked);
          }
          const own = (body: string, escape: (value: string) => string) => {
            let filled = body;
            if (name !== null) filled = filled.replaceAll(NAME_MARK, escape(name));
            if (link !== null) filled = filled.replaceAll(LINK_MARK, escape(link));
            return filled;
          };
          return { subject: marked.subject, html: own(marked.html, escapeHtmlAscii), text: own(marked.text, String) };
        },
      };
    },
  };
}
