-- Each member's own clock: a time zone (null: the organization's) and quiet hours in it.
-- zone_since: when the member's effective zone last changed (null: never); a digest match a zone's members
-- share reaches a member only if it was made after they came into that zone (what they were owed
-- from before moved with them, as matches of their own: audience '@<member id>').
ALTER TABLE "team_members" ADD COLUMN "timezone" VARCHAR(64);
ALTER TABLE "team_members" ADD COLUMN "quiet_start_hour" SMALLINT;
ALTER TABLE "team_members" ADD COLUMN "quiet_end_hour" SMALLINT;
ALTER TABLE "team_members" ADD COLUMN "zone_since" TIMESTAMPTZ(3);

-- Whom a match is for: '' every member of the rule (instant and hourly rules), a time zone's name
-- (a digest rule's members in that zone; '' on digest matches made before), or '@<member id>' (one member: matches a zone change
-- moved, or held through quiet hours).
ALTER TABLE "matches" ADD COLUMN "audience" VARCHAR(80) NOT NULL DEFAULT '';
DROP INDEX "matches_rule_id_organization_id_event_id_event_received_at_key";
CREATE UNIQUE INDEX "matches_rule_event_audience_key" ON "matches"("rule_id", "organization_id", "event_id", "event_received_at", "audience");

-- The member's zone when the delivery was made (its e-mail's times are in it) and since when they
-- were in it (which of the zone's shared matches are theirs); null on deliveries made before.
ALTER TABLE "deliveries" ADD COLUMN "time_zone" VARCHAR(64);
ALTER TABLE "deliveries" ADD COLUMN "zone_since" TIMESTAMPTZ(3);

-- Until when quiet hours [start_hour, end_hour) in `zone` hold e-mails at `at`; null when `at` is
-- outside them, or the member has none (then the zone is not even read). Hours wrap midnight when
-- start_hour > end_hour.
CREATE FUNCTION "notify_quiet_until"(zone TEXT, start_hour INT, end_hour INT, at TIMESTAMPTZ) RETURNS TIMESTAMPTZ LANGUAGE plpgsql STABLE AS $$
DECLARE
  local TIMESTAMP;
  hour INT;
BEGIN
  IF start_hour IS NULL OR end_hour IS NULL OR start_hour = end_hour THEN
    RETURN NULL;
  END IF;
  local := at AT TIME ZONE zone;
  hour := extract(hour FROM local)::int;
  IF (start_hour < end_hour AND hour >= start_hour AND hour < end_hour)
     OR (start_hour > end_hour AND (hour >= start_hour OR hour < end_hour)) THEN
    RETURN (date_trunc('day', local) + make_interval(hours => end_hour)
            + CASE WHEN hour >= end_hour THEN interval '1 day' ELSE interval '0' END) AT TIME ZONE zone;
  END IF;
  RETURN NULL;
END
$$;

-- rule_findings loses its foreign key: checking it cost every noticed finding an index probe and a
-- row lock on its rule (half of the upsert's time, measured: 0.61 s against 0.28 s for 100,000 rows).
-- The schedule role's hourly forgetting also removes the findings of rules that are gone.
ALTER TABLE "rule_findings" DROP CONSTRAINT "rule_findings_rule_id_fkey";
