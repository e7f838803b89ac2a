// The pipeline, one folder per stage: ingest → match → (instant | schedule) → deliver → send,
// reconcile, which rebuilds from PostgreSQL what Redis lost, and retention, which drops old history by the month. Words: packages/core/GLOSSARY.md.
export type { PipelineContext, PipelineMetrics, SendHere } from './context';
export { Batcher, LINGER_PROBE_MS } from './batcher';
export { Slots } from './slots';
export * from './ingest';
export { RuleIndex, type IndexedRule } from './rules/rule-index';
export { createRuleChangeAnnouncer, subscribeToRuleChanges, type RuleChange, type RuleChangeAnnouncer } from './rules/rule-changes';
export { matchEvents, matchStoredEvents, type MatchResult } from './match/match-events';
export { DUE_PERIODS_PAGE, requestDuePeriods, scheduleTick, type DeliverHere, type DeliveringHere, type DuePeriod } from './schedule/due-periods';
export { deliverPeriods } from './deliver/deliver';
export { flushRule } from './deliver/flush-rule';
export { sendDelivery, sendDeliveries, messageIdFor, CLAIM_AHEAD, EVENTS_PER_MAIL, type SendContext, type SendManyOptions, type SendManyResult, type SendOutcome } from './send/send-delivery';
export { retryDelivery } from './send/retry-delivery';
export { OutagePause } from './send/outage-pause';
export { requestSend } from './send/request-send';
export { sendTestEmails, testSendRecipients, sampleEvent, type TestSendRule } from './test-send/test-send';
export { scanScopeEvents } from './stored-events/scan-scope-events';
export { findLatestMatch } from './test-send/latest-match';
export { PREVIEW_SLICES, previewRule, type PreviewedRule, type RulePreview, type PreviewContext } from './preview/preview-rule';
export { reconcile, type ReconcileResult, type ReconcileOptions } from './reconcile/reconcile';
export { maintainHistory, refreshStatistics, RETENTION_INTERVAL_MS, STATISTICS_INTERVAL_MS, type RetentionResult } from './retention/retention';
