import { ValidationFailed } from '@notify/core';

/** PostgreSQL error codes the repositories translate into domain errors. */
export const PG = {
  uniqueViolation: '23505',
  foreignKeyViolation: '23503',
  invalidParameterValue: '22023',
} as const;

/** The PostgreSQL error code behind a pg or Prisma error, when there is one. */
export function pgCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const candidate = error as { code?: unknown; meta?: { driverAdapterError?: { cause?: { originalCode?: unknown } } } };
  const original = candidate.meta?.driverAdapterError?.cause?.originalCode;
  if (typeof original === 'string') return original;
  return typeof candidate.code === 'string' && /^\d{5}$/.test(candidate.code) ? candidate.code : undefined;
}

export function isPrismaNotFound(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'P2025';
}

/** A write that named a row another table does not have (an organization deleted meanwhile, say). */
export function isForeignKeyViolation(error: unknown): boolean {
  return pgCode(error) === PG.foreignKeyViolation;
}

/** A member removed between a rule write's check and its insert: the same answer as if it never existed. */
export function memberRaceToValidation(error: unknown): never {
  if (pgCode(error) === PG.foreignKeyViolation || (error as { code?: string }).code === 'P2003') {
    throw new ValidationFailed([{ param: 'members', details: ['A member was removed while the rule was being saved.'] }]);
  }
  throw error;
}
