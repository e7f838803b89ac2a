import { ConfigError } from '@notify/config';
import { startProcess, type RunningProcess } from './process';

/** Past this, the process leaves whatever is still running; the queue's lock expiry hands it to another process. */
const EXIT_DEADLINE_MS = 10_000;

let running: RunningProcess | undefined;
let signalled: string | undefined;

function stopAndExit(process_: RunningProcess, signal: string): void {
  process_.deps.logger.info({ signal }, 'shutting down');
  process_.stop().then(
    () => process.exit(0),
    (error) => {
      process_.deps.logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    },
  );
}

// Listening before start-up ends: a SIGTERM during migrations stops the process once it is up.
const shutdown = (signal: string) => {
  if (signalled) return;
  signalled = signal;
  setTimeout(() => process.exit(1), EXIT_DEADLINE_MS).unref();
  if (running) stopAndExit(running, signal);
};
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));

/** `npm start`: migrate, then run every role the configuration names. */
try {
  running = await startProcess();
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(2);
  }
  throw error;
}
if (signalled) stopAndExit(running, signalled);
