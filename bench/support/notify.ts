// The one file of bench/ that imports the service's own code: when a package or a pipeline
// stage is renamed, the benchmarks follow by changing this file alone.
export { loadConfig } from '@notify/config';
export { FREQUENCIES, parseIngestRequest, parseRuleListQuery, SCOPES, SEVERITIES, unsubscribeToken, validateFilters, type EventDetails, type Filters, type Frequency, type Scope } from '@notify/core';
export { createDatabase, dropExpiredHistory, ensureHistoryPartitions, listRules, migrate, quoteIdent, type Database } from '@notify/db';
export { createMailRenderer, type MailContent } from '@notify/mail';
export { createLogger, maskUrlPassword } from '@notify/observability';
export { createRedis, matchQueueName, jobPolicies, LOCK_DURATION_MS, Queues } from '@notify/queues';
export { buildApp, closeDeps, createDeps } from '@notify/api';
export type { findReferral } from '../../apps/api/src/whois/client';
export type { parseWhois } from '../../apps/api/src/whois/parse';
export { startProcess, type RunningProcess } from '@notify/server';
export { PREVIEW_SLICES, previewRule, type PreviewedRule } from '@notify/pipeline';
// The mail package's test fixtures (not part of its front door): sample alert and digest content.
export { makeContent, makeEvent } from '../../packages/mail/src/testing/fixtures';
// WHOIS answers built against the parser (test support, shared with its tests).
export { hostileWhoisAnswers } from '../../test/support/whois-records';
