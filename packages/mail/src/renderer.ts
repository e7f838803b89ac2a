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

/**
 * Parses a mustache template once. Rendering from the tokens skips `Writer.render`'s cache lookup,
 * which rebuilds and hashes a key the size of the whole template (~14 kB) on every message.
 */
function prepare(template: string, escape?: (value: unknown) => string): Fill {
  const writer = new Mustache.Writer();
  const tokens = writer.parse(template);
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
