// Mustache, rendered without HTML escaping (it is text/plain); the view model has already made
// every one-line value a single line and capped its length. Its own text is ASCII, so the part goes
// 7bit as it is unless a value is not ("·" separators made every e-mail's text quoted-printable,
// which about doubled the cost of composing a digest: see commit fd83cec).
export const TEXT_TEMPLATE = `{{organizationName}} | {{kindLabel}}
{{heading}}

{{#recipientName}}
Hello {{recipientName}},

{{/recipientName}}
Rule "{{ruleName}}" matched {{totalText}} on {{assetsText}}.
{{#periodText}}
Period: {{periodText}}
{{/periodText}}
{{#testText}}
{{testText}}
{{/testText}}
{{#repeatsText}}
{{repeatsText}}
{{/repeatsText}}
{{#severityCounts}}
  {{label}}: {{count}}
{{/severityCounts}}
{{#assetCounts.length}}

Events per asset:
{{#assetCounts}}
  {{asset}}: {{count}}
{{/assetCounts}}
{{#moreAssetsText}}
  {{moreAssetsText}}
{{/moreAssetsText}}
{{/assetCounts.length}}
{{#groups}}

== {{asset}}{{#assetType}} ({{assetType}}){{/assetType}} | {{countText}} ==
{{#severities}}

-- {{label}} | {{count}} --
{{#events}}
* {{title}}
  {{occurredAt}}{{#tags}} | {{tags}}{{/tags}}
{{#summaryText}}
  {{summaryText}}
{{/summaryText}}
{{#data}}
  {{key}}: {{value}}
{{/data}}
{{#link}}
  {{link}}
{{/link}}
{{/events}}
{{/severities}}
{{/groups}}
{{#moreText}}

{{moreText}}
{{/moreText}}

--
You receive this e-mail because the notification rule "{{ruleName}}" of {{organizationName}} ({{scopeLabel}}) sends it to you. Times are shown in {{timeZone}}.
{{#unsubscribeUrl}}
Unsubscribe from this rule: {{unsubscribeUrl}}
{{/unsubscribeUrl}}
`;
