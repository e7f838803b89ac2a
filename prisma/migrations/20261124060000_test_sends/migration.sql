-- Test sends: a test delivery carries the one event its e-mail shows (the rule's latest matching
-- stored event, or a sample), as the claim reads it; it is no period of matches.
ALTER TABLE "deliveries" ADD COLUMN "test_event" JSONB;

-- Preview and test sends read an organization's stored events of one scope, newest first.
CREATE INDEX "events_organization_id_scope_received_at_idx" ON "events"("organization_id", "scope", "received_at");
