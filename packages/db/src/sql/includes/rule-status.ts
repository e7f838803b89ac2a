/**
 * includes/rule-status — what a taken match becomes: delivered, or dropped for a disabled rule or
 * one without subscribed members.
 *
 * Takes:
 *   r              a row of notification_rules (TAKEN_STATUS; ruleStatus's `from` names it)
 *   from           (ruleStatus) a FROM list naming the rule `r`, a row per rule (or per rule and period)
 *   columns        (ruleStatus) more columns of `from` to carry, written `, w.period_key`
 * Returns:
 *   TAKEN_STATUS   an expression of `r`: 'delivered' or 'dropped' (match_status)
 *   ruleStatus(…)  the CTE rule_status (rule_id[, columns], status), MATERIALIZED
 * Used by: record-matches-deliver-and-claim-first (TAKEN_STATUS), deliver-periods-and-claim and
 *          flush-rules-deliver-and-claim (rule_status).
 */

/**
 * A taken match's new status: delivered, or dropped for a disabled rule or one without subscribed
 * members (its rule `r`). The member is found by a probe of the rule's (a scalar subquery with a
 * LIMIT), never by an EXISTS the planner may turn into a hash of every rule's members: in a kept
 * plan made for a few rows it did, on each call of the match statement.
 */
export const TAKEN_STATUS = `CASE WHEN r.enabled AND (SELECT true FROM notification_rule_members rm WHERE rm.rule_id = r.id AND rm.unsubscribed_at IS NULL LIMIT 1)
                            THEN 'delivered'::match_status ELSE 'dropped'::match_status END`;

/**
 * The CTE `rule_status` (rule_id, status and `columns` of `from`): TAKEN_STATUS of each row of
 * `from` (which names the rule `r`), worked out once a row rather than once a match: set on each
 * match, it cost a probe of the rule's row and one of its members for every match taken, a large
 * share of a flush's buffer reads (measured in commit f5a3b68). MATERIALIZED: inlined, the planner
 * would work it out for each joined match again. The UPDATE of matches is driven from it, one
 * index scan a row, and joins no other CTE: joined to one as well, the planner (ten rows estimated
 * for each) scanned that one whole for each match, which doubled a large call's time (measured in
 * commit a9df787).
 */
export const ruleStatus = (from: string, columns = ''): string => `rule_status AS MATERIALIZED (
       SELECT r.id AS rule_id${columns}, ${TAKEN_STATUS} AS status FROM ${from}
     )`;
