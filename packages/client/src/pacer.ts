import type { RateLimitInfo } from './rateLimitFields.js';

/** What the pacer knows of one policy of an origin. */
interface PolicyState {
  /** Requests that may still be sent before `resetAt`, after those already given a slot. */
  remaining: number;
  resetAt: number;
  limit: number | undefined;
  windowMs: number | undefined;
  /** The earliest send time of the next request. */
  nextSlot: number;
  /** Reservation number of the request whose response was last applied. */
  seq: number;
}

/** A request's place in the pacing schedule: when to send it, and its number for `observe`. */
export interface Reservation {
  readonly seq: number;
  readonly sendAt: number;
  /** The policy that set `sendAt` (the latest slot), or undefined when no policy held the request back. */
  readonly policy: string | undefined;
}

/** Bounds the paths remembered per origin; the oldest is forgotten first. */
const MAX_PATHS = 1000;

/**
 * Spreads one origin's requests over what its RateLimit fields allow, so that a client that follows it
 * is not refused: with `remaining` requests until `resetAt`, each policy gives out evenly spaced slots;
 * once none remain, the next slot is in the next window (quota and window known), or at the reset plus
 * jitter (unknown), so that clients blocked together do not all come back at the reset.
 *
 * A request is paced by the policies its path reported last time; a path not seen yet by every policy of
 * the origin, so that a client never knowingly sends into an exhausted policy.
 */
export class Pacer {
  readonly #jitterMs: number;
  readonly #random: () => number;
  readonly #policies = new Map<string, PolicyState>();
  readonly #paths = new Map<string, readonly string[]>();
  #seq = 0;

  constructor(jitterMs: number, random: () => number) {
    this.#jitterMs = jitterMs;
    this.#random = random;
  }

  /** Takes a slot for a request to `path` in every policy that applies to it. */
  reserve(path: string, now: number): Reservation {
    this.#seq += 1;
    let sendAt = now;
    let policy: string | undefined;
    for (const name of this.#paths.get(path) ?? [...this.#policies.keys()]) {
      const state = this.#policies.get(name);
      if (state === undefined || !this.#current(name, state, now)) continue;
      const slot = this.#slot(state, now);
      if (slot > sendAt) {
        sendAt = slot;
        policy = name;
      }
    }
    return { seq: this.#seq, sendAt, policy };
  }

  /** Applies what the response to reservation `seq` (a request to `path`) said about the policies. */
  observe(path: string, seq: number, infos: readonly RateLimitInfo[], now: number): void {
    remember(
      this.#paths,
      path,
      infos.map((info) => info.policy),
    );
    for (const info of infos) {
      const known = this.#policies.get(info.policy);
      // An answer older than one already applied would undo what the newer one said.
      if (known !== undefined && seq < known.seq) continue;
      // The requests reserved after this one may not have been counted yet: count them as spent.
      const remaining = Math.max(0, info.remaining - (this.#seq - seq));
      this.#policies.set(info.policy, {
        remaining,
        resetAt: now + info.resetMs,
        limit: info.limit,
        windowMs: info.windowMs,
        nextSlot: Math.max(known?.nextSlot ?? now, now),
        seq,
      });
    }
  }

  /** False (and the policy forgotten) once its window is over and nothing says what the next one holds. */
  #current(name: string, state: PolicyState, now: number): boolean {
    if (now < state.resetAt) return true;
    if (state.limit !== undefined && state.windowMs !== undefined && state.limit > 0 && state.windowMs > 0) {
      const windows = Math.floor((now - state.resetAt) / state.windowMs) + 1;
      state.resetAt += windows * state.windowMs;
      state.remaining = state.limit;
      return true;
    }
    this.#policies.delete(name);
    return false;
  }

  /** The next free slot of a policy, taken. */
  #slot(state: PolicyState, now: number): number {
    if (state.remaining <= 0) {
      if (
        state.limit === undefined ||
        state.windowMs === undefined ||
        state.limit <= 0 ||
        state.windowMs <= 0
      ) {
        // Nothing known of the next window: come back after the reset, each request at its own moment.
        return state.resetAt + this.#random() * this.#jitterMs;
      }
      const start = state.resetAt;
      state.remaining = state.limit;
      state.resetAt = start + state.windowMs;
      state.nextSlot = start + this.#random() * (state.windowMs / state.limit);
    }
    const slot = Math.max(now, state.nextSlot);
    state.nextSlot = slot + Math.max(0, state.resetAt - slot) / state.remaining;
    state.remaining -= 1;
    return slot;
  }
}

/** Sets `key` as the newest entry of a bounded map. */
function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > MAX_PATHS) map.delete(map.keys().next().value!);
}
