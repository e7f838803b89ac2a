import type { EventDetails } from '@notify/core';
import type { MailContent } from '../mail-content';

let counter = 0;

export function makeEvent(overrides: Partial<EventDetails> = {}): EventDetails {
  counter += 1;
  return {
    id: `evt-${counter}`,
    scope: 'new_open_port_detected',
    occurredAt: new Date('2026-11-20T10:15:00Z'),
    asset: 'mail.example.com',
    assetType: 'subdomain',
    severity: 'high',
    tags: ['production'],
    title: `Port 3389 (RDP) open on mail.example.com #${counter}`,
    summary: null,
    url: null,
    data: { port: 3389, service: 'rdp' },
    ...overrides,
  };
}

export function makeContent(overrides: Partial<MailContent> = {}): MailContent {
  return {
    organizationName: 'Acme',
    ruleName: 'Exposed ports',
    scope: 'new_open_port_detected',
    kind: 'instant',
    frequency: 'instant',
    timeZone: 'Europe/Paris',
    recipient: { email: 'soc@acme.example', name: 'SOC team' },
    events: [makeEvent()],
    ...overrides,
  };
}

/** The text a reader sees: tags dropped, the few entities mustache writes decoded. */
export function visibleText(html: string): string {
  return html
    .replace(/<style[\s\S]*?<\/style>/g, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    // Numeric references (every character beyond ASCII is one), as a browser reads them.
    .replace(/&#(\d{1,7});/g, (_, code: string) => String.fromCodePoint(Number(code)))
    .replace(/&#x2F;/g, '/')
    .replace(/&#x60;/g, '`')
    .replace(/&#x3D;/g, '=')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');
}

export function hrefs(html: string): string[] {
  return [...html.matchAll(/href="([^"]*)"/g)].map((match) => (match[1] ?? '').replace(/&#x2F;/g, '/').replace(/&#x3D;/g, '=').replace(/&amp;/g, '&'));
}
