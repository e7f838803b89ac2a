/**
 * The home of this package's SQL text: one operation per file, named for it (as graphile-worker
 * keeps its `src/sql/`), and a fused statement named for everything it does. Callers depend on
 * "claim a delivery" or "record matches", never on a table's layout. Operations that take a
 * Transaction run in the caller's `withTransaction`; the others take the database handle and run
 * on the pool.
 *
 * Pieces that several statements share live in `includes/`, each headed by its contract: what it
 * takes (parameters, CTEs, row aliases) and what it defines or returns, as BullMQ's
 * commands/includes do; a fused statement's header lists its parameters and CTEs in order.
 *
 * Exported here: the pipeline's operations. The API's (rules, silences, assets, the delivery log,
 * subscriptions, keys, members' and organizations' zones) are reached through their entity
 * modules (../rules.ts and the rest), which are thin fronts over them or Prisma CRUD that calls
 * them. Only the schema's own tooling keeps SQL elsewhere: migrate.ts and schema-drift/ read and
 * write the catalog on connections of their own.
 */
// ingest
export { existingOrganizationIds } from './existing-organization-ids';
export { storeEvents, storeEventsToMatch, type StoredEvent } from './store-events';
// match
export { loadEnabledRules, loadEnabledRulesAfter, type EnabledRule } from './load-enabled-rules';
export { lockUnmatchedEvents, type UnmatchedEvent } from './lock-unmatched-events';
export { openCoalescingWindows, type CoalescingWindow } from './open-coalescing-windows';
export { recordMatches, type NewMatch, type RecordedMatches } from './record-matches-deliver-and-claim-first';
export { loadSilences, type UnexpiredSilence } from './load-silences';
export { countSilenced } from './count-silenced';
export { noticeFindings, type Finding } from './notice-findings';
export { forgetOldFindings } from './forget-old-findings';
// schedule
export { findDuePeriods, DUE_MATCHES_READ_PER_PERIOD } from './find-due-periods';
// deliver
export { lockRules } from './lock-rules';
export { periodsWithDeliveries } from './periods-with-deliveries';
export { rekeyPendingMatches } from './rekey-pending-matches';
export { createDeliveries } from './deliver-periods-and-claim';
export { flushDeliveries, type FlushedDeliveries } from './flush-rules-deliver-and-claim';
export { PROBE_MEMBERS_FROM } from './includes/deliveries-from-matches';
export type { ClaimsWhenMade, CreatedDelivery, MadeDeliveries } from './includes/claim-made-deliveries';
// send
export { claimDeliveries } from './claim-deliveries';
export type { ClaimedDelivery, DeliveryEvent } from './includes/claimed-delivery';
export { cancelDelivery } from './cancel-delivery';
export { releaseDeliveries, releaseDelivery } from './release-delivery';
export { postponeDelivery } from './postpone-delivery';
export { recordFailedAttempt } from './record-failed-attempt';
export { markDeliveriesSent } from './mark-deliveries-sent';
export { suppressDelivery } from './suppress-delivery';
export { markBouncing } from './mark-bouncing';
export { findDeliveryStatus } from './find-delivery-status';
export { reopenDelivery } from './reopen-delivery';
// test sends and preview
export { readScopeEvents, ALL_SCOPE_EVENT_COLUMNS, type ScopeEvent, type ScopeEventCursor, type ScopeEventColumns } from './read-scope-events';
export { readEventDetails } from './read-event-details';
export { createTestDeliveries, type TestDelivery } from './create-test-deliveries';
// member zones
export { moveMemberDigests, type ZoneMove } from './move-member-digests';
// reconcile
export { findUnmatchedEvents } from './find-unmatched-events';
export { findUnsentDeliveries } from './find-unsent-deliveries';
// retention
export { ensureHistoryPartitions } from './ensure-history-partitions';
export { dropExpiredHistory, type ExpiredHistory } from './drop-expired-history';
export { HISTORY_TABLES, HISTORY_PARTITION_KEYS, type HistoryTable } from './includes/history-partitions';
// planner statistics
export { analyzeGrownTables, ANALYZE_MIN_CHANGES } from './analyze-grown-tables';
// health
export { ping } from './ping';
