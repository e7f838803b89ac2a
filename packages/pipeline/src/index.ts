// The pipeline, one folder per stage: ingest → match → schedule → deliver → send. Each stage is an
// object built once with its resources (assemble.ts); hand-offs/ joins neighbours, in this process
// (a fast path, fast-paths.ts) or through the queue. reconcile rebuilds from PostgreSQL what Redis
// lost, and retention drops old history by the month. Words: packages/core/GLOSSARY.md.
export type { PipelineMetrics, PipelineResources } from './resources';
export { ALL_FAST_PATHS, NO_FAST_PATHS, type FastPaths } from './fast-paths';
export { assemblePipeline, type AssembleOptions, type Pipeline, type StageRole } from './assemble';
export { Batcher, LINGER_PROBE_MS } from './batcher';
export { Slots } from './slots';
export { IngestStage, MATCH_IN_STORE_LOCK_TIMEOUT_MS, MATCH_IN_STORE_UP_TO, STORE_LINGER_UNTIL, type IngestOptions, type IngestResult, type IngestStageOptions, type MatchInStore } from './ingest/ingest-stage';
export { createEventPublisher, type EventPublisher } from './ingest/publisher';
export { RuleIndex, type IndexedRule } from './rules/rule-index';
export { createRuleChangeAnnouncer, subscribeToRuleChanges, type RuleChange, type RuleChangeAnnouncer } from './rules/rule-changes';
export { MatchStage, type MatchResult, type MatchStageOptions } from './match/match-stage';
export { DUE_PERIODS_PAGE, ScheduleStage } from './schedule/schedule-stage';
export { DeliverStage, type DuePeriod, type FlushResult } from './deliver/deliver-stage';
export { CLAIM_AHEAD, EVENTS_PER_MAIL, SendStage, type SendManyOptions, type SendManyResult, type SendOutcome, type SendStageOptions } from './send/send-stage';
export type { Destination, FailureKind } from './send/destination';
export { emailDestination, messageIdFor, type EmailDestinationOptions } from './send/email-destination';
export { OutagePause } from './send/outage-pause';
export { retryDelivery } from './send/retry-delivery';
export { DEFAULT_PUBLISH_TIMEOUT_MS, MATCH_HERE_MAX_EVENTS, MatchInProcess, matchQueue, type MatchQueueOptions, type ToMatch } from './hand-offs/to-match';
export { DELIVER_HERE_MAX_PERIODS, DeliverInProcess, deliverQueue, type ToDeliver } from './hand-offs/to-deliver';
export { SEND_HERE_MAX_DELIVERIES, SendInProcess, sendQueue, type ToSend } from './hand-offs/to-send';
export { sendTestEmails, testSendRecipients, sampleEvent, type TestSendRule } from './test-send/test-send';
export { scanScopeEvents } from './stored-events/scan-scope-events';
export { findLatestMatch } from './test-send/latest-match';
export { lazyMailRenderer, PREVIEW_SLICES, previewRule, type PreviewedRule, type RulePreview, type PreviewContext } from './preview/preview-rule';
export { reconcile, type ReconcileResult, type ReconcileOptions } from './reconcile/reconcile';
export { maintainHistory, refreshStatistics, RETENTION_INTERVAL_MS, STATISTICS_INTERVAL_MS, type RetentionResult } from './retention/retention';
