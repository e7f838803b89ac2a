export { startWorkerRoles, type WorkerRuntime, type WorkerRuntimeOptions } from './runtime';
export { createProcessors, type ProcessorMap, type Processors } from './processors';
export { InProcessMatching, MATCH_HERE_MAX_EVENTS } from './processors/match-here';
