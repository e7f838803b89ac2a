export { startWorkerRoles, type WorkerRuntime, type WorkerRuntimeOptions } from './runtime';
export { createProcessors, type ProcessorMap } from './processors';
