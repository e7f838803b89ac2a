-- AlterTable
ALTER TABLE "organizations" ADD COLUMN     "max_rules" INTEGER NOT NULL DEFAULT 1000;
