-- CreateTable
CREATE TABLE "assets" (
    "organization_id" UUID NOT NULL,
    "asset" VARCHAR(1024) NOT NULL,
    "asset_type" VARCHAR(64),
    "tags" TEXT[],
    "scopes" "scope"[],
    "first_seen" TIMESTAMPTZ(3) NOT NULL,
    "last_seen" TIMESTAMPTZ(3) NOT NULL,
    "asset_lower" TEXT NOT NULL,
    "asset_lower_reversed" TEXT NOT NULL,
    "tags_lower" TEXT[],

    CONSTRAINT "assets_pkey" PRIMARY KEY ("organization_id","asset")
);

-- CreateIndex
CREATE INDEX "assets_organization_id_asset_lower_idx" ON "assets"("organization_id", "asset_lower");

-- CreateIndex
CREATE INDEX "assets_asset_lower_idx" ON "assets" USING SPGIST ("asset_lower");

-- CreateIndex
CREATE INDEX "assets_asset_lower_reversed_idx" ON "assets" USING SPGIST ("asset_lower_reversed");

-- CreateIndex
CREATE INDEX "assets_tags_lower_idx" ON "assets" USING GIN ("tags_lower");

-- CreateIndex
CREATE INDEX "assets_scopes_idx" ON "assets" USING GIN ("scopes");

-- AddForeignKey
ALTER TABLE "assets" ADD CONSTRAINT "assets_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Backfill (added by hand): the inventory of the events stored before this migration.
INSERT INTO "assets" ("organization_id", "asset", "asset_type", "tags", "scopes", "first_seen", "last_seen", "asset_lower", "asset_lower_reversed", "tags_lower")
SELECT e."organization_id", e."asset",
       (array_agg(e."asset_type" ORDER BY e."occurred_at" DESC) FILTER (WHERE e."asset_type" IS NOT NULL))[1],
       COALESCE(array_agg(DISTINCT t.tag) FILTER (WHERE t.tag IS NOT NULL), '{}'),
       array_agg(DISTINCT e."scope"),
       min(e."occurred_at"), max(e."occurred_at"),
       lower(e."asset"), reverse(lower(e."asset")),
       COALESCE(array_agg(DISTINCT lower(t.tag)) FILTER (WHERE t.tag IS NOT NULL), '{}')
  FROM "events" e
  LEFT JOIN LATERAL unnest(e."tags") AS t(tag) ON true
 GROUP BY e."organization_id", e."asset";
