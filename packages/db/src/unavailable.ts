import { causeChain } from '@notify/core';

/** Node socket codes that mean the database could not be reached or the connection broke. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * PostgreSQL SQLSTATEs of a server that is away or going away: class 08 (connection exception),
 * 57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect now (starting up, shutting
 * down), 53300 too many connections.
 */
const UNAVAILABLE_STATES = /^(08|57P0[123]$|53300$)/;

/** Prisma's codes for the same: can't reach, timed out, closed the connection, pool timeout. */
const PRISMA_CODES = new Set(['P1001', 'P1002', 'P1017', 'P2024']);

const MESSAGES = /Connection terminated|Can't reach database|server closed the connection|the database system is (starting up|shutting down|in recovery mode)|terminating connection due to administrator command/i;

/**
 * Whether an error says the database is away (down, restarting, unreachable, out of connections):
 * worth a 503 and a retry, not a 500. Follows `cause` chains (Prisma's adapter wraps pg's errors).
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (const { code, message } of causeChain(error)) {
    if (typeof code === 'string' && (SOCKET_CODES.has(code) || UNAVAILABLE_STATES.test(code) || PRISMA_CODES.has(code))) return true;
    if (typeof message === 'string' && MESSAGES.test(message)) return true;
  }
  return false;
}

/**
 * Whether PostgreSQL cancelled a statement because it ran past `statement_timeout` (SQLSTATE 57014,
 * query_canceled, with its message: a cancel by an operator has the same state and another message).
 */
export function isStatementTimeout(error: unknown): boolean {
  for (const { code, message } of causeChain(error)) {
    if (typeof message === 'string' && message.includes('canceling statement due to statement timeout')) return true;
    if (code === '57014' && typeof message === 'string' && /statement timeout/i.test(message)) return true;
  }
  return false;
}
