export type { Period, Schedule } from './types';
export { isValidTimeZone } from './time-zone';
export { normalizeSchedule } from './normalize';
export { nextDeliveryAt } from './delivery';
export { duePeriods, periodByKey, periodContaining } from './period';
