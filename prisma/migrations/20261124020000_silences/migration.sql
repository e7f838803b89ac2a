-- Silences: time-bounded orders, in the condition language, that hold back matches of the events
-- they cover (for all of an organization's rules, or for named ones).
ALTER TYPE "match_status" ADD VALUE 'silenced';

-- The silence that held a match back (status 'silenced').
ALTER TABLE "matches" ADD COLUMN "silence_id" UUID;

CREATE TABLE "notification_silences" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "filters" JSONB NOT NULL,
    "rule_ids" UUID[],
    "starts_at" TIMESTAMPTZ(3) NOT NULL,
    "ends_at" TIMESTAMPTZ(3) NOT NULL,
    "comment" VARCHAR(1000) NOT NULL,
    "silenced_count" INTEGER NOT NULL DEFAULT 0,
    "added_date" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_update_date" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "notification_silences_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "notification_silences_organization_id_ends_at_idx" ON "notification_silences"("organization_id", "ends_at");
CREATE INDEX "notification_silences_ends_at_idx" ON "notification_silences"("ends_at");

ALTER TABLE "notification_silences" ADD CONSTRAINT "notification_silences_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;
