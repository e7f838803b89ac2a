import type { Frequency } from '../scopes';

/** A rule's delivery settings read in its organization's IANA time zone. */
export interface Schedule {
  frequency: Frequency;
  deliveryHour: number | null;
  deliveryDayOfWeek: number | null;
  timeZone: string;
}

/** A digest period: matches made at instants in [start, end) are delivered at `dueAt` (== end). */
export interface Period {
  key: string;
  start: Date;
  end: Date;
  dueAt: Date;
}

export interface ScheduleSettings {
  frequency: Frequency;
  deliveryHour: number | null;
  deliveryDayOfWeek: number | null;
}

export interface ScheduleSettingsInput {
  frequency?: Frequency;
  deliveryHour?: number | null;
  deliveryDayOfWeek?: number | null;
}
