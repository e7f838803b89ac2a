import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, ROLES } from './index';

const roles = (value?: string) => loadConfig(value === undefined ? {} : { ROLES: value }).roles;

describe('ROLES', () => {
  it('runs every stage by default', () => {
    expect(roles()).toEqual([...ROLES]);
    expect(ROLES).toEqual(['api', 'match', 'schedule', 'deliver', 'send']);
  });

  it('takes the stage names', () => {
    expect(roles('api, send')).toEqual(['api', 'send']);
    expect(roles('deliver')).toEqual(['deliver']);
  });

  it('refuses an unknown role, naming the ones it knows', () => {
    expect(() => roles('api,mailman')).toThrow(ConfigError);
    expect(() => roles('api,mailman')).toThrow(/unknown role "mailman": expected api, match, schedule, deliver, send$/);
    expect(() => roles('matcher')).toThrow(/unknown role "matcher"/);
    expect(() => roles('toString')).toThrow(/unknown role "toString"/);
    expect(() => roles(' , ')).toThrow(/at least one role/);
  });
});
