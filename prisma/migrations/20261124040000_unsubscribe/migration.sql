-- RFC 8058 one-click unsubscribe: a member who opted out of a rule stays among its members and
-- gets no e-mail from it until they opt in again.
ALTER TABLE "notification_rule_members" ADD COLUMN "unsubscribed_at" TIMESTAMPTZ(3);
