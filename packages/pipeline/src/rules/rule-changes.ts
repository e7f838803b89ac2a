import type { RedisClient } from '@notify/queues';

/** What changed, for the match stage's index to reload: rules, all rules of organizations, or organizations' silences. */
export interface RuleChange {
  ruleIds?: string[];
  organizationIds?: string[];
  silenceOrganizationIds?: string[];
}

export interface RuleChangeAnnouncer {
  announce(change: RuleChange): Promise<void>;
}

/** Announces on `channel` (the catalog's `rulesChanged`). */
export function createRuleChangeAnnouncer(redis: RedisClient, channel: string): RuleChangeAnnouncer {
  return {
    async announce(change) {
      await redis.publish(channel, JSON.stringify(change));
    },
  };
}

/** Calls `onChange` for every announcement; ioredis resubscribes by itself after a reconnect. */
export async function subscribeToRuleChanges(subscriber: RedisClient, onChange: (change: RuleChange) => void, channel: string): Promise<void> {
  subscriber.on('message', (from, message) => {
    if (from !== channel) return;
    try {
      onChange(JSON.parse(message) as RuleChange);
    } catch {
      // A malformed announcement is ignored; the periodic resync covers it.
    }
  });
  await subscriber.subscribe(channel);
}
