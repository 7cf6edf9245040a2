import { ConfigError } from '@sluice/core';

/** The answer to a subscription: added (or already held), or refused at the per-connection maximum. */
export type Subscribed =
  | { readonly ok: true; readonly count: number }
  | {
      readonly ok: false;
      readonly type: 'subscription_limit';
      readonly channel: string;
      readonly limit: number;
    };

/**
 * Subscriptions (channels, rooms, topics) per connection, at most `limit` at a time. A connection lives in one
 * process, so its set is kept here, not in the store; it goes with the connection (held weakly).
 */
export interface SubscriptionLimit {
  readonly limit: number;
  /** Adds `channel` to the connection's set unless that would pass the limit; a channel already held is free. */
  subscribe(connection: object, channel: string): Subscribed;
  unsubscribe(connection: object, channel: string): void;
  /** The connection's channels. */
  channels(connection: object): ReadonlySet<string>;
}

/** Builds a per-connection subscription limit; throws ConfigError unless `limit` is a positive integer. */
export function subscriptionLimit(limit: number): SubscriptionLimit {
  if (!(Number.isInteger(limit) && limit > 0))
    throw new ConfigError(`maxSubscriptions must be a positive integer, got ${String(limit)}`);
  const sets = new WeakMap<object, Set<string>>();
  const setOf = (connection: object): Set<string> => {
    const held = sets.get(connection);
    if (held !== undefined) return held;
    const set = new Set<string>();
    sets.set(connection, set);
    return set;
  };
  return {
    limit,
    subscribe(connection, channel) {
      const set = setOf(connection);
      if (!set.has(channel) && set.size >= limit)
        return { ok: false, type: 'subscription_limit', channel, limit };
      set.add(channel);
      return { ok: true, count: set.size };
    },
    unsubscribe: (connection, channel) => void sets.get(connection)?.delete(channel),
    channels: (connection) => sets.get(connection) ?? new Set(),
  };
}
