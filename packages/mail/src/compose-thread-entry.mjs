// A compose thread's entry when the process runs from source (tests, `npm start` outside production):
// the thread's module is TypeScript, loaded through tsx as the process's own modules are. A built
// process starts the compiled module (compose-thread.js) directly.
import { workerData } from 'node:worker_threads';

const { register } = await import('tsx/esm/api');
register();
await import(workerData.module);
