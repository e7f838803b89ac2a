/**
 * API keys' management (generate, list, rename, make default, delete): ordinary CRUD in Prisma
 * (Prisma style). Looking a presented key up, authentication's hot path, is one statement of
 * sql/ (api-key-lookup.ts).
 */
import { apiKeyPrefix, Conflict, generateApiKey, hashApiKey, isUuid, messages, NotFound, ValidationFailed } from '@notify/core';
import type { Database } from './client';
import { pgCode, PG } from './errors';
import { getOrganization } from './organizations';

export interface ApiKeyInfo {
  id: string;
  organizationId: string;
  name: string;
  prefix: string;
  isDefault: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** Returned once, at generation: the only time the key itself exists outside the caller. */
export interface GeneratedApiKey extends ApiKeyInfo {
  key: string;
}

function validateName(name: unknown): string {
  const trimmed = typeof name === 'string' ? name.trim() : '';
  if (name === undefined || name === null) throw new ValidationFailed([{ param: 'name', details: [messages.required] }]);
  if (trimmed === '') throw new ValidationFailed([{ param: 'name', details: [messages.notBlank] }]);
  if (trimmed.length > 255) throw new ValidationFailed([{ param: 'name', details: [messages.maxLength(255)] }]);
  return trimmed;
}

function toInfo(row: { id: string; organizationId: string; name: string; keyPrefix: string; createdAt: Date; updatedAt: Date }, defaultId: string | null): ApiKeyInfo {
  return {
    id: row.id,
    organizationId: row.organizationId,
    name: row.name,
    prefix: row.keyPrefix,
    isDefault: row.id === defaultId,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/** Generates a key; an organization's first key becomes its default. */
export async function generateKey(db: Database, organizationId: string, name: unknown): Promise<GeneratedApiKey> {
  const keyName = validateName(name);
  await getOrganization(db, organizationId);
  const key = generateApiKey();
  const { row, defaultId } = await db.prisma.$transaction(async (tx) => {
    const row = await tx.apiKey.create({
      data: { organizationId, name: keyName, keyHash: hashApiKey(key), keyPrefix: apiKeyPrefix(key) },
    });
    // Atomic, so two first keys generated at once still leave exactly one default.
    await tx.organization.updateMany({ where: { id: organizationId, defaultApiKeyId: null }, data: { defaultApiKeyId: row.id } });
    const org = await tx.organization.findUniqueOrThrow({ where: { id: organizationId }, select: { defaultApiKeyId: true } });
    return { row, defaultId: org.defaultApiKeyId };
  });
  return { ...toInfo(row, defaultId), key };
}

export async function listKeys(db: Database, organizationId: string): Promise<ApiKeyInfo[]> {
  const org = await getOrganization(db, organizationId);
  const rows = await db.prisma.apiKey.findMany({ where: { organizationId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  return rows.map((row) => toInfo(row, org.defaultApiKeyId));
}

export interface KeyChanges {
  name?: unknown;
  isDefault?: unknown;
}

export async function updateKey(db: Database, organizationId: string, keyId: string, changes: KeyChanges): Promise<ApiKeyInfo> {
  const name = changes.name === undefined ? undefined : validateName(changes.name);
  if (changes.isDefault !== undefined && changes.isDefault !== true) {
    throw new ValidationFailed([
      { param: 'is_default', details: ['Only true is accepted: make another key the default instead.'] },
    ]);
  }
  await getOrganization(db, organizationId);
  if (!isUuid(keyId)) throw new NotFound('API key not found.');
  return db.prisma.$transaction(async (tx) => {
    const existing = await tx.apiKey.findFirst({ where: { id: keyId, organizationId } });
    if (!existing) throw new NotFound('API key not found.');
    const row = name === undefined ? existing : await tx.apiKey.update({ where: { id: keyId }, data: { name } });
    const org = changes.isDefault
      ? await tx.organization.update({ where: { id: organizationId }, data: { defaultApiKeyId: keyId } })
      : await tx.organization.findUniqueOrThrow({ where: { id: organizationId } });
    return toInfo(row, org.defaultApiKeyId);
  });
}

/** The default key is protected: another key must be made default first (409). */
export async function deleteKey(db: Database, organizationId: string, keyId: string): Promise<void> {
  const org = await getOrganization(db, organizationId);
  if (!isUuid(keyId)) throw new NotFound('API key not found.');
  if (org.defaultApiKeyId === keyId) {
    throw new Conflict('The default API key cannot be deleted. Make another key the default first.');
  }
  try {
    const { count } = await db.prisma.apiKey.deleteMany({ where: { id: keyId, organizationId } });
    if (count === 0) throw new NotFound('API key not found.');
  } catch (error) {
    // Made default by someone else between our read and the delete: the foreign key refuses.
    if (pgCode(error) === PG.foreignKeyViolation || (error as { code?: string }).code === 'P2003') {
      throw new Conflict('The default API key cannot be deleted. Make another key the default first.');
    }
    throw error;
  }
}
