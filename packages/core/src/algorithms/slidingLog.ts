import type { Charge } from './charge.js';
import { type AlgorithmDescriptor, hasRecords } from './descriptor.js';
import type { LimitParams, Outcome } from './limits.js';
import { storedCount } from './stored.js';

/** One allowed request in a sliding log: its time (epoch ms) and cost. */
export interface LogEntry {
  readonly at: number;
  readonly cost: number;
}

/** sliding_log state: the allowed requests still inside the window, oldest first. */
export interface SlidingLogState {
  readonly entries: readonly LogEntry[];
}

/**
 * Entries still counted at `now`: those with `now - at < windowMs`. An entry ahead of `now` (a clock that
 * stepped back) counts too, up to one window ahead; further ahead it is stale or corrupt and is dropped.
 */
function live(state: SlidingLogState | undefined, now: number, windowMs: number): readonly LogEntry[] {
  if (state === undefined) return [];
  return state.entries.filter((entry) => now - entry.at < windowMs && entry.at - now <= windowMs);
}

function total(entries: readonly LogEntry[]): number {
  let sum = 0;
  for (const entry of entries) sum += storedCount(entry.cost);
  return sum;
}

/** Adds an entry keeping the log sorted; same-millisecond entries merge into one. */
function append(entries: readonly LogEntry[], at: number, cost: number): LogEntry[] {
  const last = entries[entries.length - 1];
  if (last !== undefined && last.at === at) {
    return [...entries.slice(0, -1), { at, cost: storedCount(last.cost) + cost }];
  }
  const next = [...entries, { at, cost }];
  // A clock that stepped back (another gateway's time) may put the new entry before the last.
  if (last !== undefined && last.at > at) next.sort((a, b) => a.at - b.at);
  return next;
}

/**
 * The wait until the oldest entries leaving the window free `excess` units; an entry ahead of `now` is
 * counted as if made now, so that the wait stays within the window. Times round up to whole ms.
 */
function waitToFree(entries: readonly LogEntry[], excess: number, now: number, windowMs: number): number {
  let freed = 0;
  for (const entry of entries) {
    freed += storedCount(entry.cost);
    if (freed >= excess) return Math.min(Math.ceil(entry.at), now) + windowMs - now;
  }
  return 0;
}

/** The newest entry's time (-Infinity for none). */
function newestAt(entries: readonly LogEntry[]): number {
  let newest = Number.NEGATIVE_INFINITY;
  for (const entry of entries) newest = Math.max(newest, entry.at);
  return newest;
}

/** Time until every entry has left the window, entries ahead of `now` counted as made now. */
function msUntilEmpty(newest: number, now: number, windowMs: number): number {
  return newest === Number.NEGATIVE_INFINITY ? 0 : Math.min(Math.ceil(newest), now) + windowMs - now;
}

/** How long the log must be kept: until its newest entry, wherever it lies, has left the window. */
function msToKeep(newest: number, now: number, windowMs: number): number {
  return newest === Number.NEGATIVE_INFINITY ? 0 : Math.ceil(newest) + windowMs - now;
}

/**
 * Takes a charge off the entry logged at its time, while that entry is still in the window (once it has
 * left, the charge no longer counts and there is nothing to give back). Never below 0: an entry emptied goes.
 */
function refundEntry(
  state: SlidingLogState,
  now: number,
  params: LimitParams,
  charge: Charge,
): { state: SlidingLogState; ttlMs: number } | undefined {
  if (charge.at === undefined) return undefined;
  const t = Math.floor(now);
  const at = Math.floor(charge.at);
  const entries = live(state, t, params.windowMs);
  const entry = entries.find((candidate) => candidate.at === at);
  const held = entry === undefined ? 0 : storedCount(entry.cost);
  if (held <= 0) return undefined;
  const left = held - charge.cost;
  const next =
    left > 0
      ? entries.map((candidate) => (candidate === entry ? { at, cost: left } : candidate))
      : entries.filter((candidate) => candidate !== entry);
  return { state: { entries: next }, ttlMs: msToKeep(newestAt(next), t, params.windowMs) };
}

/**
 * sliding_log: an exact log of allowed requests; a request is allowed when the costs logged in the last
 * windowMs (entries with `now - at < windowMs`) plus its cost fit the limit. Memory grows with the limit,
 * so it is for small exact limits.
 */
export const slidingLog: AlgorithmDescriptor<'sliding_log', SlidingLogState> = {
  name: 'sliding_log',
  limit: 'requests',
  burst: false,
  calendar: false,
  leasable: true,
  release: 'refund',
  refund: refundEntry,
  isState: (value): value is SlidingLogState => hasRecords(value, 'entries'),
  decide(state, now, params, cost) {
    const t = Math.floor(now);
    const entries = live(state, t, params.windowMs);
    const used = total(entries);
    if (cost > params.limit || used + cost > params.limit) {
      const newest = newestAt(entries);
      const resetMs = msUntilEmpty(newest, t, params.windowMs);
      const outcome: Outcome<SlidingLogState> = {
        allowed: false,
        state: state ?? { entries: [] },
        limit: params.limit,
        remaining: Math.max(0, params.limit - used),
        resetMs,
        retryAfterMs:
          cost > params.limit
            ? Number.POSITIVE_INFINITY
            : waitToFree(entries, used + cost - params.limit, t, params.windowMs),
        ttlMs: msToKeep(newest, t, params.windowMs),
      };
      return outcome;
    }
    const next = cost > 0 ? append(entries, t, cost) : [...entries];
    const newest = newestAt(next);
    const resetMs = msUntilEmpty(newest, t, params.windowMs);
    return {
      allowed: true,
      state: { entries: next },
      limit: params.limit,
      remaining: Math.max(0, params.limit - used - cost),
      resetMs,
      retryAfterMs: 0,
      ttlMs: msToKeep(newest, t, params.windowMs),
    };
  },
};
