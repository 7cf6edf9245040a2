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

/**
 * A request's place in the schedule. `taken`: send at `sendAt`, then pass `seq` to `observe`. Not taken:
 * a policy has nothing left before its reset; wait until `sendAt` and ask again, so that the slot comes
 * from what the answers received meanwhile say rather than from a guess made now.
 */
export interface Reservation {
  readonly taken: boolean;
  readonly seq: number;
  readonly sendAt: number;
  /** The policy that set `sendAt`, or undefined when no policy held the request back. */
  readonly policy: string | undefined;
}

/** Bounds the paths remembered per origin; the oldest is forgotten first. */
const MAX_PATHS = 1000;

/**
 * Spreads one origin's requests over what its RateLimit fields allow, so that a client that follows it
 * is not refused: with `remaining` requests until `resetAt`, each policy gives out evenly spaced slots.
 * Once none remain, requests wait for the reset plus a random part of the jitter, so that clients blocked
 * together do not all come back at the reset; a policy whose quota and window are known then starts
 * over, less the requests still unanswered; one with nothing known of its next window is forgotten.
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

  /**
   * A slot for a request to `path` in every policy that applies to it; none while a policy is spent,
   * unless `force` (the request goes anyway: a wait too long to make) takes one past the quota.
   */
  reserve(path: string, now: number, force = false): Reservation {
    const applying: [string, PolicyState][] = [];
    let resumeAt = now;
    let blocking: string | undefined;
    for (const name of this.#paths.get(path) ?? [...this.#policies.keys()]) {
      const state = this.#policies.get(name);
      if (state === undefined || !this.#current(name, state, now)) continue;
      applying.push([name, state]);
      if (state.remaining > 0) continue;
      const at = state.resetAt + this.#random() * this.#jitterMs;
      if (at > resumeAt) [resumeAt, blocking] = [at, name];
    }
    if (blocking !== undefined && !force) return { taken: false, seq: 0, sendAt: resumeAt, policy: blocking };
    this.#seq += 1;
    let sendAt = now;
    let policy: string | undefined;
    for (const [name, state] of applying) {
      const slot = takeSlot(state, now);
      if (slot > sendAt) [sendAt, policy] = [slot, name];
    }
    return { taken: true, seq: this.#seq, sendAt, policy };
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
      this.#policies.set(info.policy, {
        remaining: Math.max(0, info.remaining - this.#unanswered(seq)),
        resetAt: now + info.resetMs,
        limit: info.limit,
        windowMs: info.windowMs,
        nextSlot: Math.max(known?.nextSlot ?? now, now),
        seq,
      });
    }
  }

  /** Requests given a slot after reservation `seq`: the server may not have counted them yet. */
  #unanswered(seq: number): number {
    return this.#seq - seq;
  }

  /**
   * Brings a policy up to `now`: once its reset is past, a known quota starts over (less the requests
   * still unanswered, which may count in the new window); false (and the policy forgotten) when nothing
   * says what the next window holds.
   */
  #current(name: string, state: PolicyState, now: number): boolean {
    if (now < state.resetAt) return true;
    const { limit, windowMs } = state;
    if (limit === undefined || windowMs === undefined || limit <= 0 || windowMs <= 0) {
      this.#policies.delete(name);
      return false;
    }
    state.resetAt += (Math.floor((now - state.resetAt) / windowMs) + 1) * windowMs;
    state.remaining = Math.max(0, limit - this.#unanswered(state.seq));
    return true;
  }
}

/** The next free slot of a policy with requests remaining, taken: evenly spaced until its reset. */
function takeSlot(state: PolicyState, now: number): number {
  const slot = Math.max(now, state.nextSlot);
  state.nextSlot = slot + Math.max(0, state.resetAt - slot) / Math.max(1, state.remaining);
  state.remaining -= 1;
  return slot;
}

/** Sets `key` as the newest entry of a bounded map. */
function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > MAX_PATHS) map.delete(map.keys().next().value!);
}
