import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, INGEST_TOKEN } from '../support/app';
import { createTestDatabase, DATABASE_URL, REDIS_URL } from '../support/database';
import { spawnServer } from '../support/processes';

describe('start-up with a MAIL_FROM that is not one address', () => {
  it('does not start, naming MAIL_FROM, rather than fail every e-mail', async () => {
    const db = await createTestDatabase();
    try {
      const start = spawnServer({
        DATABASE_URL, DATABASE_SCHEMA: db.schema, REDIS_URL, QUEUE_PREFIX: `test-mail-from-${process.pid}`, ADMIN_TOKEN, INGEST_TOKEN, LOG_LEVEL: 'info',
        MAIL_FROM: 'alerts@notify.test, attacker@evil.example',
      });
      const error = await start.then(
        async (server) => {
          await server.kill();
          return undefined;
        },
        (reason: unknown) => reason as Error,
      );
      expect(error?.message).toMatch(/the server did not start: MAIL_FROM must be one address.*not "alerts@notify\.test, attacker@evil\.example"/);
    } finally {
      await db.drop();
    }
  });
});
