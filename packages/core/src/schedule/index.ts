export type { Period, Schedule } from './types';
export { isValidTimeZone } from './time-zone';
export { normalizeSchedule } from './normalize';
export { periodContaining } from './period';
export { periodKeys } from './period-key';
