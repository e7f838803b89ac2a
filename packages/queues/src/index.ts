export * from './catalog';
export { Queues, DEFAULT_PREFIX, type QueueOptions } from './queues';
