import type { Redis } from 'ioredis';

/** Redis channel on which the API announces rule and organization changes to the match stage's rule indexes. */
export const RULE_CHANGES_CHANNEL = 'notify:rules:changed';

export interface RuleChange {
  ruleIds?: string[];
  organizationIds?: string[];
}

export interface RuleChangeAnnouncer {
  announce(change: RuleChange): Promise<void>;
}

export function createRuleChangeAnnouncer(redis: Redis, channel = RULE_CHANGES_CHANNEL): RuleChangeAnnouncer {
  return {
    async announce(change) {
      await redis.publish(channel, JSON.stringify(change));
    },
  };
}

/** Calls `onChange` for every announcement; ioredis resubscribes by itself after a reconnect. */
export async function subscribeToRuleChanges(subscriber: Redis, onChange: (change: RuleChange) => void, channel = RULE_CHANGES_CHANNEL): Promise<void> {
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
