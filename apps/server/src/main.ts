import { ConfigError } from '@notify/config';
import { startProcess } from './process';

/** `npm start`: migrate, then run every role the configuration names. */
let running;
try {
  running = await startProcess();
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(2);
  }
  throw error;
}
const { deps, stop } = running;

let signalled = false;
const shutdown = (signal: string) => {
  if (signalled) return;
  signalled = true;
  deps.logger.info({ signal }, 'shutting down');
  // Jobs in flight finish or go back to their queue; past 10 s we leave, and the
  // queue's lock expiry hands what remains to another process.
  setTimeout(() => process.exit(1), 10_000).unref();
  stop().then(
    () => process.exit(0),
    (error) => {
      deps.logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    },
  );
};
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));
