-- Bounces: a recipient refused for good at RCPT TO marks the member's address as bouncing; their
-- later e-mails are recorded suppressed, not sent, until an operator clears it.
ALTER TYPE "delivery_status" ADD VALUE 'suppressed';

ALTER TABLE "team_members" ADD COLUMN "bouncing_since" TIMESTAMPTZ(3);
ALTER TABLE "team_members" ADD COLUMN "bounce_reply" VARCHAR(300);
