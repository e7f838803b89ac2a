/** The 21 kinds of event a scanner reports and a rule can watch, in the spec's order. */
export const SCOPES = [
  'new_issue_detected',
  'reappeared_issue_detected',
  'asset_security_score_decreased',
  'asset_security_score_changed',
  'asset_ssl_changed',
  'asset_whois_changed',
  'asset_dns_changed',
  'domain_security_score_decreased',
  'domain_security_score_changed',
  'new_asset_discovered',
  'new_asset_added',
  'new_vulnerability_detected',
  'reappeared_vulnerability_detected',
  'new_email_breach_detected',
  'new_suspicious_domain_detected',
  'new_fraudulent_domain_detected',
  'new_open_port_detected',
  'new_employee_credential_detected',
  'new_client_credential_detected',
  'new_payment_credential_detected',
  'new_cybersecurity_news_added',
] as const;

export type Scope = (typeof SCOPES)[number];

export function isScope(value: unknown): value is Scope {
  return typeof value === 'string' && (SCOPES as readonly string[]).includes(value);
}

/** Severity in ascending order; `gte`/`lte` conditions compare by this order. */
export const SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

export const FREQUENCIES = ['instant', 'hourly', 'daily', 'weekly', 'monthly'] as const;
export type Frequency = (typeof FREQUENCIES)[number];
