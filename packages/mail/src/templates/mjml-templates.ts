// MJML with mustache tags, compiled to HTML once at start. Rules for editing:
// - only `{{name}}` (escaped) — never `{{{name}}}` or `{{&name}}`; a test enforces it;
// - loops around whole sections go in <mj-raw>, which MJML copies through untouched;
// - every `href` gets a value the view model already restricted to http(s);
// - a loop writes a line per item (its closing tag on a line of its own): the HTML part goes as
//   7bit only while no line passes 998 characters (a test holds a large digest to it).

const HEAD = `
  <mj-head>
    <mj-title>{{subject}}</mj-title>
    <mj-attributes>
      <mj-all font-family="-apple-system, 'Segoe UI', Helvetica, Arial, sans-serif" />
      <mj-text font-size="14px" line-height="1.5" color="#111827" />
      <mj-section padding="8px 0" />
    </mj-attributes>
  </mj-head>`;

// The inbox preview line. Not <mj-preview>: its hidden text is white on white, which SpamAssassin
// scores as HTML_FONT_LOW_CONTRAST; hidden without a colour, it scores nothing.
const PREHEADER = `
    <mj-raw><div style="display:none;font-size:1px;line-height:1px;max-height:0px;max-width:0px;opacity:0;overflow:hidden;mso-hide:all;">{{preheader}}</div></mj-raw>`;

const HEADER = `
    <mj-section background-color="#111827" padding="16px 0">
      <mj-column>
        <mj-text color="#d1d5db" font-size="12px" padding-bottom="0">{{organizationName}} · {{kindLabel}}</mj-text>
        <mj-text color="#ffffff" font-size="20px" font-weight="600">{{heading}}</mj-text>
      </mj-column>
    </mj-section>`;

const SUMMARY = `
    <mj-section>
      <mj-column>
        <mj-text>
          {{#recipientName}}<p style="margin:0 0 8px">Hello {{recipientName}},</p>{{/recipientName}}
          <p style="margin:0 0 8px">Rule <strong>{{ruleName}}</strong> matched <strong>{{totalText}}</strong> on {{assetsText}}.</p>
          {{#periodText}}<p style="margin:0 0 8px;color:#4b5563">Period: {{periodText}}</p>{{/periodText}}
          {{#testText}}<p style="margin:0 0 8px;padding:6px 10px;border-left:3px solid #1d4ed8;color:#111827">{{testText}}</p>{{/testText}}
          {{#repeatsText}}<p style="margin:0 0 8px;color:#4b5563">{{repeatsText}}</p>{{/repeatsText}}
          <p style="margin:0">{{#severityCounts}}<span style="display:inline-block;margin:0 6px 6px 0;padding:2px 8px;border-radius:10px;background-color:{{color}};color:#ffffff;font-size:12px">{{count}} {{label}}</span>{{/severityCounts}}</p>
        </mj-text>
      </mj-column>
    </mj-section>`;

const ASSET_TABLE = `
    <mj-raw>{{#assetCounts.length}}</mj-raw>
    <mj-section>
      <mj-column>
        <mj-text font-size="16px" font-weight="600" padding-bottom="0">Events per asset</mj-text>
        <mj-table font-size="13px">
          {{#assetCounts}}<tr style="border-bottom:1px solid #e5e7eb"><td style="padding:4px 0">{{asset}}</td><td style="padding:4px 0;text-align:right">{{count}}</td></tr>
          {{/assetCounts}}
          {{#moreAssetsText}}<tr><td colspan="2" style="padding:4px 0;color:#4b5563">{{moreAssetsText}}</td></tr>{{/moreAssetsText}}
        </mj-table>
      </mj-column>
    </mj-section>
    <mj-raw>{{/assetCounts.length}}</mj-raw>`;

// Every asset's group in one section, a line above each: a section each wrapped every asset in
// MJML's tables and Outlook conditionals, which nearly doubled a digest's HTML (see commit 3c31e74
// and asciiHtml). Gmail cuts an e-mail's HTML off past 102 KB, the unsubscribe link with it.
const EVENT_GROUPS = `
    <mj-section>
      <mj-column>
        <mj-text padding-top="0" padding-bottom="0">
          {{#groups}}
          <div style="border-top:1px solid #e5e7eb;padding:10px 0 0;margin:0 0 14px">
          <h2 style="margin:8px 0 4px;font-size:16px">{{asset}}{{#assetType}} <span style="color:#6b7280;font-weight:400">({{assetType}})</span>{{/assetType}} <span style="color:#6b7280;font-weight:400">· {{countText}}</span></h2>
          {{#severities}}
          <h3 style="margin:12px 0 6px;font-size:13px;color:{{color}};text-transform:uppercase">{{label}} · {{count}}</h3>
          {{#events}}
          <div style="margin:0 0 12px;padding:6px 10px;border-left:3px solid {{color}}">
            <div style="font-weight:600">{{#link}}<a href="{{link}}" target="_blank" rel="noopener noreferrer" style="color:#1d4ed8">{{title}}</a>{{/link}}{{^link}}{{title}}{{/link}}</div>
            <div style="color:#6b7280;font-size:12px">{{occurredAt}}{{#tags}} · {{tags}}{{/tags}}</div>
            {{#summary}}<div style="margin-top:4px;white-space:pre-line">{{summary}}</div>{{/summary}}
            {{#data}}<div style="font-size:12px;color:#374151"><span style="color:#6b7280">{{key}}:</span> {{value}}</div>
            {{/data}}
          </div>
          {{/events}}
          {{/severities}}
          </div>
          {{/groups}}
        </mj-text>
      </mj-column>
    </mj-section>
    <mj-raw>{{#moreText}}</mj-raw>
    <mj-section>
      <mj-column>
        <mj-text color="#4b5563" font-style="italic">{{moreText}}</mj-text>
      </mj-column>
    </mj-section>
    <mj-raw>{{/moreText}}</mj-raw>`;

const FOOTER = `
    <mj-section>
      <mj-column border-top="1px solid #e5e7eb">
        <mj-text font-size="12px" color="#6b7280">You receive this e-mail because the notification rule “{{ruleName}}” of {{organizationName}} ({{scopeLabel}}) sends it to you. Times are shown in {{timeZone}}.{{#unsubscribeUrl}} <a href="{{unsubscribeUrl}}" style="color:#374151">Unsubscribe from this rule</a>.{{/unsubscribeUrl}}</mj-text>
      </mj-column>
    </mj-section>`;

export const INSTANT_MJML = `<mjml lang="en">${HEAD}
  <mj-body background-color="#ffffff" width="640px">${PREHEADER}${HEADER}${SUMMARY}${EVENT_GROUPS}${FOOTER}
  </mj-body>
</mjml>`;

export const DIGEST_MJML = `<mjml lang="en">${HEAD}
  <mj-body background-color="#ffffff" width="640px">${PREHEADER}${HEADER}${SUMMARY}${ASSET_TABLE}${EVENT_GROUPS}${FOOTER}
  </mj-body>
</mjml>`;
