-- One e-mail per finding: events carry the scanner's fingerprint of the finding (null: derived
-- from scope, asset and title when matched), a rule may e-mail a finding again only after
-- renotify_after_hours, and rule_findings remembers when each rule last took a finding as news.
ALTER TYPE "match_status" ADD VALUE 'repeat';

ALTER TABLE "events" ADD COLUMN "fingerprint" VARCHAR(256);

ALTER TABLE "notification_rules" ADD COLUMN "renotify_after_hours" INTEGER;

-- A finding by a 64-bit digest of its fingerprint (findingKey): a narrow key, written on every
-- match of a rule with renotify_after_hours.
CREATE TABLE "rule_findings" (
    "rule_id" UUID NOT NULL,
    "finding_key" BIGINT NOT NULL,
    "noticed_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "rule_findings_pkey" PRIMARY KEY ("rule_id","finding_key")
);

ALTER TABLE "rule_findings" ADD CONSTRAINT "rule_findings_rule_id_fkey" FOREIGN KEY ("rule_id") REFERENCES "notification_rules"("id") ON DELETE CASCADE ON UPDATE CASCADE;
