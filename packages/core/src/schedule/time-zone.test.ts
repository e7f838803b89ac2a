import { describe, expect, it } from 'vitest';
import { isValidTimeZone } from './index';

describe('isValidTimeZone', () => {
  it.each(['UTC', 'Europe/Berlin', 'America/New_York', 'Pacific/Kiritimati', 'Asia/Kathmandu', 'Etc/GMT+2', 'America/Argentina/Buenos_Aires'])(
    'accepts the IANA name %s',
    (zone) => expect(isValidTimeZone(zone)).toBe(true),
  );

  it.each(['', ' ', 'Mars/Base', '+02:00', 'UTC+2', 'Z', 'Europe/Berlin ', 'local', 'Europe//Berlin'])(
    'rejects %j',
    (zone) => expect(isValidTimeZone(zone)).toBe(false),
  );
});
