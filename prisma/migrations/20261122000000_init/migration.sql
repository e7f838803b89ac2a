-- CreateEnum
CREATE TYPE "scope" AS ENUM ('new_issue_detected', 'reappeared_issue_detected', 'asset_security_score_decreased', 'asset_security_score_changed', 'asset_ssl_changed', 'asset_whois_changed', 'asset_dns_changed', 'domain_security_score_decreased', 'domain_security_score_changed', 'new_asset_discovered', 'new_asset_added', 'new_vulnerability_detected', 'reappeared_vulnerability_detected', 'new_email_breach_detected', 'new_suspicious_domain_detected', 'new_fraudulent_domain_detected', 'new_open_port_detected', 'new_employee_credential_detected', 'new_client_credential_detected', 'new_payment_credential_detected', 'new_cybersecurity_news_added');

-- CreateEnum
CREATE TYPE "frequency" AS ENUM ('instant', 'hourly', 'daily', 'weekly', 'monthly');

-- CreateTable
CREATE TABLE "organizations" (
    "id" UUID NOT NULL,
    "name" VARCHAR(255) NOT NULL,
    "timezone" VARCHAR(64) NOT NULL DEFAULT 'UTC',
    "plan_groups" TEXT[] DEFAULT ARRAY['platform']::TEXT[],
    "rate_limit_per_second" INTEGER NOT NULL DEFAULT 10,
    "rate_limit_per_minute" INTEGER NOT NULL DEFAULT 300,
    "monthly_quota" INTEGER NOT NULL DEFAULT 1000,
    "default_api_key_id" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "organizations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "team_members" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "email" VARCHAR(320) NOT NULL,
    "name" VARCHAR(255),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "team_members_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "name" VARCHAR(255) NOT NULL,
    "key_hash" CHAR(64) NOT NULL,
    "key_prefix" VARCHAR(8) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "notification_rules" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "name" VARCHAR(255) NOT NULL,
    "scope" "scope" NOT NULL,
    "strategy" JSONB,
    "frequency" "frequency" NOT NULL DEFAULT 'instant',
    "delivery_hour" SMALLINT,
    "delivery_day_of_week" SMALLINT,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "added_date" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_update_date" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "notification_rules_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "notification_rule_members" (
    "rule_id" UUID NOT NULL,
    "team_member_id" UUID NOT NULL,

    CONSTRAINT "notification_rule_members_pkey" PRIMARY KEY ("rule_id","team_member_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "organizations_default_api_key_id_key" ON "organizations"("default_api_key_id");

-- CreateIndex
CREATE UNIQUE INDEX "team_members_organization_id_email_key" ON "team_members"("organization_id", "email");

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_key_hash_key" ON "api_keys"("key_hash");

-- CreateIndex
CREATE INDEX "api_keys_organization_id_created_at_idx" ON "api_keys"("organization_id", "created_at");

-- CreateIndex
CREATE INDEX "notification_rules_organization_id_added_date_idx" ON "notification_rules"("organization_id", "added_date");

-- CreateIndex
CREATE INDEX "notification_rules_organization_id_scope_enabled_idx" ON "notification_rules"("organization_id", "scope", "enabled");

-- CreateIndex
CREATE INDEX "notification_rule_members_team_member_id_idx" ON "notification_rule_members"("team_member_id");

-- AddForeignKey
ALTER TABLE "organizations" ADD CONSTRAINT "organizations_default_api_key_id_fkey" FOREIGN KEY ("default_api_key_id") REFERENCES "api_keys"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "team_members" ADD CONSTRAINT "team_members_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "notification_rules" ADD CONSTRAINT "notification_rules_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "notification_rule_members" ADD CONSTRAINT "notification_rule_members_rule_id_fkey" FOREIGN KEY ("rule_id") REFERENCES "notification_rules"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "notification_rule_members" ADD CONSTRAINT "notification_rule_members_team_member_id_fkey" FOREIGN KEY ("team_member_id") REFERENCES "team_members"("id") ON DELETE CASCADE ON UPDATE CASCADE;
