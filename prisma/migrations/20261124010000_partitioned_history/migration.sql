-- History (events, matches, deliveries) partitioned by month, so that retention drops whole
-- partitions instead of deleting rows (packages/db/src/sql/drop-expired-history.ts).
--
-- Partition keys are server time, never a scanner's: events by received_at, matches by their
-- event's received_at (a match always lives in its event's month, so both are dropped together),
-- deliveries by created_at. Each parent also has a DEFAULT partition, so no insert can fail for
-- want of a month; the schedule role creates months ahead (notify_ensure_history_partition) and
-- moves into a new month any rows the default had to take meanwhile.
--
-- Uniqueness. PostgreSQL wants the partition key inside every unique index of a parent:
--   * matches: (rule_id, organization_id, event_id, event_received_at) is unique on the parent; an
--     event's received_at is a function of (organization_id, event_id), so this is (rule, event).
--   * events: each month has its own unique index on (organization_id, id), the arbiter of the
--     ingest's ON CONFLICT DO NOTHING; the ingest statement also skips ids stored in older months.
--   * deliveries: each month has its own unique index on (rule_id, team_member_id, period_key);
--     deliveries are created under the rule's row lock and skip keys delivered in older months.
-- The copy below is a one-time cost proportional to the history already stored.

-- Keep the rows; the tables are recreated partitioned.
CREATE TEMP TABLE "history_events" ON COMMIT DROP AS TABLE "events";
CREATE TEMP TABLE "history_matches" ON COMMIT DROP AS
  SELECT m.*, e."received_at" AS "event_received_at" FROM "matches" m
    JOIN "events" e ON e."organization_id" = m."organization_id" AND e."id" = m."event_id";
CREATE TEMP TABLE "history_deliveries" ON COMMIT DROP AS TABLE "deliveries";
CREATE TEMP TABLE "history_matches_next_id" ON COMMIT DROP AS SELECT COALESCE(max("id"), 0) + 1 AS "next_id" FROM "matches";

DROP TABLE "matches";
DROP TABLE "deliveries";
DROP TABLE "events";

CREATE TABLE "events" (
    "organization_id" UUID NOT NULL,
    "id" VARCHAR(128) NOT NULL,
    "scope" "scope" NOT NULL,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL,
    "asset" VARCHAR(1024) NOT NULL,
    "asset_type" VARCHAR(64),
    "severity" VARCHAR(16),
    "tags" TEXT[],
    "title" VARCHAR(1024) NOT NULL,
    "summary" TEXT,
    "url" VARCHAR(2048),
    "data" JSONB,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "matched_at" TIMESTAMPTZ(3),

    CONSTRAINT "events_pkey" PRIMARY KEY ("organization_id","id","received_at")
) PARTITION BY RANGE ("received_at");

CREATE TABLE "matches" (
    "id" BIGSERIAL NOT NULL,
    "rule_id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "event_id" VARCHAR(128) NOT NULL,
    "event_received_at" TIMESTAMPTZ(3) NOT NULL,
    "period_key" VARCHAR(64) NOT NULL,
    "due_at" TIMESTAMPTZ(3) NOT NULL,
    "status" "match_status" NOT NULL DEFAULT 'pending',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "matches_pkey" PRIMARY KEY ("id","event_received_at")
) PARTITION BY RANGE ("event_received_at");

CREATE TABLE "deliveries" (
    "id" UUID NOT NULL,
    "rule_id" UUID NOT NULL,
    "team_member_id" UUID,
    "email" VARCHAR(320) NOT NULL,
    "period_key" VARCHAR(64) NOT NULL,
    "status" "delivery_status" NOT NULL DEFAULT 'pending',
    "event_count" INTEGER NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "message_id" VARCHAR(255),
    "last_error" TEXT,
    "first_event_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "sent_at" TIMESTAMPTZ(3),

    CONSTRAINT "deliveries_pkey" PRIMARY KEY ("id","created_at")
) PARTITION BY RANGE ("created_at");

CREATE INDEX "events_matched_at_received_at_idx" ON "events"("matched_at", "received_at");
CREATE INDEX "matches_status_due_at_idx" ON "matches"("status", "due_at");
CREATE INDEX "matches_rule_id_period_key_idx" ON "matches"("rule_id", "period_key");
CREATE INDEX "matches_organization_id_event_id_idx" ON "matches"("organization_id", "event_id");
CREATE UNIQUE INDEX "matches_rule_id_organization_id_event_id_event_received_at_key" ON "matches"("rule_id", "organization_id", "event_id", "event_received_at");
CREATE INDEX "deliveries_status_updated_at_idx" ON "deliveries"("status", "updated_at");
CREATE INDEX "deliveries_rule_id_created_at_idx" ON "deliveries"("rule_id", "created_at");
CREATE INDEX "deliveries_team_member_id_idx" ON "deliveries"("team_member_id");

-- Outgoing foreign keys only: nothing references a partitioned table, so a month drops at once.
-- A match's event is in the same month (same partition key), and retention drops both together.
ALTER TABLE "events" ADD CONSTRAINT "events_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "matches" ADD CONSTRAINT "matches_rule_id_fkey" FOREIGN KEY ("rule_id") REFERENCES "notification_rules"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "deliveries" ADD CONSTRAINT "deliveries_rule_id_fkey" FOREIGN KEY ("rule_id") REFERENCES "notification_rules"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "deliveries" ADD CONSTRAINT "deliveries_team_member_id_fkey" FOREIGN KEY ("team_member_id") REFERENCES "team_members"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- The unique index each partition of a table has of its own (see Uniqueness above); null when
-- the parent's own indexes are enough.
CREATE FUNCTION "notify_history_partition_key"(parent TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE parent WHEN 'events' THEN '(organization_id, id)'
                     WHEN 'deliveries' THEN '(rule_id, team_member_id, period_key)' END
$$;

-- Creates the month partition of `parent` that starts at `month_start` (its first day, UTC),
-- named <parent>_pYYYY_MM, unless it exists; rows the DEFAULT partition took for that month are
-- moved into it. Returns true when it created the partition. Callers serialize (advisory lock).
CREATE FUNCTION "notify_ensure_history_partition"(parent TEXT, month_start DATE) RETURNS BOOLEAN LANGUAGE plpgsql AS $$
DECLARE
  part TEXT := parent || '_p' || to_char(month_start, 'YYYY_MM');
  dflt TEXT := parent || '_default';
  lower_bound TIMESTAMPTZ := month_start::timestamp AT TIME ZONE 'UTC';
  upper_bound TIMESTAMPTZ := (month_start + INTERVAL '1 month')::timestamp AT TIME ZONE 'UTC';
  key_column TEXT;
  local_key TEXT := notify_history_partition_key(parent);
  stranded BOOLEAN;
BEGIN
  IF to_regclass(quote_ident(part)) IS NOT NULL THEN RETURN false; END IF;
  SELECT a.attname INTO STRICT key_column
    FROM pg_partitioned_table p JOIN pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = p.partattrs[0]
   WHERE p.partrelid = to_regclass(quote_ident(parent));
  EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I WHERE %I >= $1 AND %I < $2)', dflt, key_column, key_column)
    INTO stranded USING lower_bound, upper_bound;
  IF stranded THEN
    EXECUTE format('ALTER TABLE %I DETACH PARTITION %I', parent, dflt);
  END IF;
  EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)', part, parent, lower_bound, upper_bound);
  IF local_key IS NOT NULL THEN
    EXECUTE format('CREATE UNIQUE INDEX %I ON %I %s', part || '_key', part, local_key);
  END IF;
  IF stranded THEN
    EXECUTE format('WITH moved AS (DELETE FROM %I WHERE %I >= $1 AND %I < $2 RETURNING *) INSERT INTO %I SELECT * FROM moved',
                   dflt, key_column, key_column, parent) USING lower_bound, upper_bound;
    EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I DEFAULT', parent, dflt);
  END IF;
  RETURN true;
END
$$;

DO $$
DECLARE
  parent TEXT;
  month_start DATE;
BEGIN
  FOREACH parent IN ARRAY ARRAY['events', 'matches', 'deliveries'] LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF %I DEFAULT', parent || '_default', parent);
    IF notify_history_partition_key(parent) IS NOT NULL THEN
      EXECUTE format('CREATE UNIQUE INDEX %I ON %I %s', parent || '_default_key', parent || '_default', notify_history_partition_key(parent));
    END IF;
  END LOOP;
  -- Every month the stored history covers, through two months ahead.
  FOR month_start IN
    SELECT generate_series(
             date_trunc('month', LEAST(
               (SELECT min("received_at") FROM "history_events"),
               (SELECT min("created_at") FROM "history_deliveries"),
               now()) AT TIME ZONE 'UTC'),
             date_trunc('month', now() AT TIME ZONE 'UTC') + INTERVAL '2 months',
             INTERVAL '1 month')::date
  LOOP
    FOREACH parent IN ARRAY ARRAY['events', 'matches', 'deliveries'] LOOP
      PERFORM notify_ensure_history_partition(parent, month_start);
    END LOOP;
  END LOOP;
END
$$;

INSERT INTO "events" SELECT * FROM "history_events";
INSERT INTO "matches" ("id", "rule_id", "organization_id", "event_id", "event_received_at", "period_key", "due_at", "status", "created_at")
  SELECT "id", "rule_id", "organization_id", "event_id", "event_received_at", "period_key", "due_at", "status", "created_at" FROM "history_matches";
INSERT INTO "deliveries" SELECT * FROM "history_deliveries";
SELECT setval(pg_get_serial_sequence('matches', 'id'), (SELECT "next_id" FROM "history_matches_next_id"), false);
