import mjml2html from 'mjml';
import Mustache from 'mustache';
import type { MailContent, MailRenderer, RenderedMail } from './mail-content';
import { DIGEST_MJML, INSTANT_MJML } from './templates/mjml-templates';
import { TEXT_TEMPLATE } from './templates/text-template';
import type { MailView } from './view-model';
import { buildView } from './view-model';

type Fill = (view: MailView) => string;

export async function compileMjml(source: string): Promise<string> {
  // `strict` turns a template mistake into a start-up failure instead of a broken e-mail.
  const result = await mjml2html(source, { validationLevel: 'strict', keepComments: false, fonts: {} });
  return result.html;
}

/** A mustache token: [type, value, start, end, children?, ...]. */
type Token = [string, string, number, number, Token[]?, ...unknown[]];

/**
 * Makes each text token's value one flat string. Mustache's parser builds a text run by appending
 * it a character at a time, which V8 keeps as a tree of one-character strings; every message that
 * copied such a run walked that tree again (a 20-event digest: ~0.3 ms of CPU per message, more
 * than filling it).
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
 * Parses a mustache template once. Rendering from the tokens skips `Writer.render`'s cache lookup,
 * which rebuilds and hashes a key the size of the whole template (~14 kB) on every message.
 */
function prepare(template: string, escape?: (value: unknown) => string): Fill {
  const writer = new Mustache.Writer();
  const tokens = writer.parse(template);
  flattenText(tokens as Token[]);
  const config = escape ? { escape } : undefined;
  return (view) => writer.renderTokens(tokens, new Mustache.Context(view), undefined, template, config);
}

/**
 * Compiles both MJML templates to HTML once (MJML 5 compiles asynchronously, hence the promise) and
 * returns a renderer that only fills them; mustache HTML-escapes every value it inserts.
 */
export async function createMailRenderer(): Promise<MailRenderer> {
  const [instantHtml, digestHtml] = await Promise.all([compileMjml(INSTANT_MJML), compileMjml(DIGEST_MJML)]);
  const instant = prepare(instantHtml);
  const digest = prepare(digestHtml);
  const text = prepare(TEXT_TEMPLATE, String);

  return {
    render(content: MailContent): RenderedMail {
      const view = buildView(content);
      return { subject: view.subject, html: (content.kind === 'digest' ? digest : instant)(view), text: text(view) };
    },
  };
}
