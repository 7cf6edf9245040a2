import type { ValueSet } from './valueSet.js';

/**
 * A named set of values or CIDR ranges that can change while running (a watched file, a Redis set). Read on
 * every request that reaches a rule naming it, so `current` answers from memory.
 */
export interface ValueList {
  /** The entries in force now. */
  readonly current: ValueSet;
  /** Stops watching or refreshing. */
  close?(): Promise<void>;
}

/** Lists by the name rules give them. */
export type Lists = Readonly<Record<string, ValueList>>;
