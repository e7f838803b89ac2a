import type { Scope } from '@notify/core';

interface ScopeWording {
  /** Sentence-case name of the kind of event, as a heading. */
  label: string;
  /** Counted forms, for "1 new open port detected" / "3 new open ports detected". */
  one: string;
  many: string;
}

const WORDING: Record<Scope, ScopeWording> = {
  new_issue_detected: { label: 'New issue detected', one: 'new issue detected', many: 'new issues detected' },
  reappeared_issue_detected: { label: 'Reappeared issue detected', one: 'reappeared issue detected', many: 'reappeared issues detected' },
  asset_security_score_decreased: { label: 'Asset security score decreased', one: 'asset security score decreased', many: 'asset security scores decreased' },
  asset_security_score_changed: { label: 'Asset security score changed', one: 'asset security score changed', many: 'asset security scores changed' },
  asset_ssl_changed: { label: 'Asset SSL certificate changed', one: 'asset SSL certificate change', many: 'asset SSL certificate changes' },
  asset_whois_changed: { label: 'Asset WHOIS record changed', one: 'asset WHOIS record change', many: 'asset WHOIS record changes' },
  asset_dns_changed: { label: 'Asset DNS records changed', one: 'asset DNS change', many: 'asset DNS changes' },
  domain_security_score_decreased: { label: 'Domain security score decreased', one: 'domain security score decreased', many: 'domain security scores decreased' },
  domain_security_score_changed: { label: 'Domain security score changed', one: 'domain security score changed', many: 'domain security scores changed' },
  new_asset_discovered: { label: 'New asset discovered', one: 'new asset discovered', many: 'new assets discovered' },
  new_asset_added: { label: 'New asset added', one: 'new asset added', many: 'new assets added' },
  new_vulnerability_detected: { label: 'New vulnerability detected', one: 'new vulnerability detected', many: 'new vulnerabilities detected' },
  reappeared_vulnerability_detected: { label: 'Reappeared vulnerability detected', one: 'reappeared vulnerability detected', many: 'reappeared vulnerabilities detected' },
  new_email_breach_detected: { label: 'New e-mail breach detected', one: 'new e-mail breach detected', many: 'new e-mail breaches detected' },
  new_suspicious_domain_detected: { label: 'New suspicious domain detected', one: 'new suspicious domain detected', many: 'new suspicious domains detected' },
  new_fraudulent_domain_detected: { label: 'New fraudulent domain detected', one: 'new fraudulent domain detected', many: 'new fraudulent domains detected' },
  new_open_port_detected: { label: 'New open port detected', one: 'new open port detected', many: 'new open ports detected' },
  new_employee_credential_detected: { label: 'New employee credential detected', one: 'new employee credential detected', many: 'new employee credentials detected' },
  new_client_credential_detected: { label: 'New client credential detected', one: 'new client credential detected', many: 'new client credentials detected' },
  new_payment_credential_detected: { label: 'New payment credential detected', one: 'new payment credential detected', many: 'new payment credentials detected' },
  new_cybersecurity_news_added: { label: 'New cybersecurity news added', one: 'new cybersecurity news item added', many: 'new cybersecurity news items added' },
};

// A scope added upstream before this table learns it still reads as words rather than an identifier.
function fallback(scope: string): ScopeWording {
  const words = scope.replace(/[^A-Za-z0-9]+/g, ' ').trim().toLowerCase() || 'event';
  return { label: words.charAt(0).toUpperCase() + words.slice(1), one: words, many: words };
}

function wording(scope: Scope): ScopeWording {
  return Object.hasOwn(WORDING, scope) ? WORDING[scope] : fallback(scope);
}

export function scopeLabel(scope: Scope): string {
  return wording(scope).label;
}

/** "1 new open port detected", "3 new open ports detected". */
export function countedScope(scope: Scope, count: number): string {
  const { one, many } = wording(scope);
  return `${count} ${count === 1 ? one : many}`;
}

export function countedEvents(count: number): string {
  return `${count} ${count === 1 ? 'event' : 'events'}`;
}
