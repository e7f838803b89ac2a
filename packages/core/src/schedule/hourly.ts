import { offsetAt, offsetChangeBetween } from './time-zone';

const HOUR = 3_600_000;
// Each step either returns or crosses one offset change; real zones never need more than two.
const MAX_STEPS = 8;

// Hourly deliveries are the instants at local minute 0. Working in UTC with the local
// offset (instead of "every 60 minutes") keeps +05:30 and +05:45 zones on the local hour,
// keeps both occurrences of a repeated hour and never invents one in a spring-forward gap.

/** First instant at or after `from` where the local clock shows minute 0. */
export function firstLocalHourFrom(zone: string, from: number): number {
  let lower = from;
  for (let step = 0; step < MAX_STEPS; step++) {
    const offset = offsetAt(zone, lower);
    const candidate = Math.ceil((lower + offset) / HOUR) * HOUR - offset;
    if (offsetAt(zone, candidate) === offset) return candidate;
    lower = offsetChangeBetween(zone, lower, candidate);
  }
  throw new Error(`No local hour found after ${new Date(from).toISOString()} in ${zone}`);
}

/** Last instant at or before `to` where the local clock shows minute 0. */
export function lastLocalHourUntil(zone: string, to: number): number {
  let upper = to;
  for (let step = 0; step < MAX_STEPS; step++) {
    const offset = offsetAt(zone, upper);
    const candidate = Math.floor((upper + offset) / HOUR) * HOUR - offset;
    if (offsetAt(zone, candidate) === offset) return candidate;
    upper = offsetChangeBetween(zone, candidate, upper) - 1;
  }
  throw new Error(`No local hour found before ${new Date(to).toISOString()} in ${zone}`);
}
