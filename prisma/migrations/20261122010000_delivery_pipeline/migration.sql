-- CreateEnum
CREATE TYPE "match_status" AS ENUM ('pending', 'delivered', 'dropped');

-- CreateEnum
CREATE TYPE "delivery_status" AS ENUM ('pending', 'sending', 'sent', 'failed', 'cancelled');

-- AlterTable
ALTER TABLE "notification_rules" ADD COLUMN "burst_until" TIMESTAMPTZ(3);

-- CreateTable
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

    CONSTRAINT "events_pkey" PRIMARY KEY ("organization_id","id")
);

-- CreateTable
CREATE TABLE "matches" (
    "id" BIGSERIAL NOT NULL,
    "rule_id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "event_id" VARCHAR(128) NOT NULL,
    "period_key" VARCHAR(64) NOT NULL,
    "due_at" TIMESTAMPTZ(3) NOT NULL,
    "status" "match_status" NOT NULL DEFAULT 'pending',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "matches_pkey" PRIMARY KEY ("id")
);

-- CreateTable
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

    CONSTRAINT "deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "events_matched_at_received_at_idx" ON "events"("matched_at", "received_at");

-- CreateIndex
CREATE INDEX "matches_status_due_at_idx" ON "matches"("status", "due_at");

-- CreateIndex
CREATE INDEX "matches_rule_id_period_key_idx" ON "matches"("rule_id", "period_key");

-- CreateIndex
CREATE INDEX "matches_organization_id_event_id_idx" ON "matches"("organization_id", "event_id");

-- CreateIndex
CREATE UNIQUE INDEX "matches_rule_id_organization_id_event_id_key" ON "matches"("rule_id", "organization_id", "event_id");

-- CreateIndex
CREATE INDEX "deliveries_status_updated_at_idx" ON "deliveries"("status", "updated_at");

-- CreateIndex
CREATE INDEX "deliveries_rule_id_created_at_idx" ON "deliveries"("rule_id", "created_at");

-- CreateIndex
CREATE INDEX "deliveries_team_member_id_idx" ON "deliveries"("team_member_id");

-- CreateIndex
CREATE UNIQUE INDEX "deliveries_rule_id_team_member_id_period_key_key" ON "deliveries"("rule_id", "team_member_id", "period_key");

-- AddForeignKey
ALTER TABLE "events" ADD CONSTRAINT "events_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "matches" ADD CONSTRAINT "matches_rule_id_fkey" FOREIGN KEY ("rule_id") REFERENCES "notification_rules"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "matches" ADD CONSTRAINT "matches_organization_id_event_id_fkey" FOREIGN KEY ("organization_id", "event_id") REFERENCES "events"("organization_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "deliveries" ADD CONSTRAINT "deliveries_rule_id_fkey" FOREIGN KEY ("rule_id") REFERENCES "notification_rules"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "deliveries" ADD CONSTRAINT "deliveries_team_member_id_fkey" FOREIGN KEY ("team_member_id") REFERENCES "team_members"("id") ON DELETE SET NULL ON UPDATE CASCADE;
