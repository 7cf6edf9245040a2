import { createLimiter, type Decision, type Lists, MemoryStore } from '@sluice/core';
import type { CompiledRules } from '@sluice/core/store';
import { keyId } from './keys.js';
import type { ReplayReport } from './report.js';
import type { ReplayRequest } from './request.js';
import { type KeyDisplay, RuleTally } from './ruleTally.js';

const HOUR_MS = 3_600_000;

/** Options of {@link createReplay}. */
export interface ReplayOptions {
  /** Show descriptor values instead of counter tags. Default false. */
  readonly showKeys?: boolean;
  /** The limiter's keySecret, so that shown tags equal the production counter tags. */
  readonly keySecret?: string;
  /** Keys listed per rule. Default 20. */
  readonly top?: number;
  /** Counters the limiter's MemoryStore keeps; default MemoryStore's (1,000,000). */
  readonly maxKeys?: number;
  /** The lists the rules name (`--list`); each must be given, as to any limiter. */
  readonly lists?: Lists;
}

/** A replay fed one request at a time (for logs too large to hold), then reported. */
export interface Replay {
  /** Decides one request with its own time as the clock; returns the decision. */
  add(request: ReplayRequest): Decision;
  /** Counts a line that gave no request. */
  skip(kind: 'ignored' | 'unreadable'): void;
  finish(): ReplayReport;
}

/**
 * Runs requests through a limiter on a MemoryStore whose clock is each request's time, and tallies what every
 * rule did. Concurrency leases are released at once (logs say nothing of how long a request was held).
 */
export function createReplay(rules: CompiledRules, options: ReplayOptions = {}): Replay {
  let now = 0;
  const store = new MemoryStore(options.maxKeys === undefined ? {} : { maxKeys: options.maxKeys });
  const limiter = createLimiter({
    rules,
    store,
    clock: () => now,
    ...(options.lists === undefined ? {} : { lists: options.lists }),
    ...(options.keySecret === undefined ? {} : { keySecret: options.keySecret }),
  });
  const tallies = new Map(rules.rules.map((rule) => [rule.name, new RuleTally(rule)]));
  const counts = { requests: 0, denied: 0, logged429: 0, unreadable: 0, ignored: 0, outOfOrder: 0 };
  let from: number | undefined;
  let to: number | undefined;

  function add(request: ReplayRequest): Decision {
    now = request.time;
    if (to !== undefined && now < to - 1000) counts.outOfOrder++;
    from = from === undefined || now < from ? now : from;
    to = to === undefined || now > to ? now : to;
    counts.requests++;
    if (request.status === 429) counts.logged429++;
    const decision = limiter.decide(request.descriptors);
    if (decision instanceof Promise) throw new Error('replay needs a limiter that decides in process');
    if (!decision.allowed) counts.denied++;
    if (decision.leases.length > 0) void limiter.release(decision);
    for (const result of decision.results) {
      const tally = tallies.get(result.rule);
      const id = tally && keyId(tally.rule, request.descriptors);
      if (id !== undefined) tally?.add(id, result, decision.allowed, now, request.descriptors);
    }
    return decision;
  }

  function finish(): ReplayReport {
    const hours: number[] = [];
    if (from !== undefined && to !== undefined) {
      for (let hour = Math.floor(from / HOUR_MS) * HOUR_MS; hour <= to; hour += HOUR_MS) hours.push(hour);
    }
    const display: KeyDisplay = {
      showKeys: options.showKeys ?? false,
      keySecret: options.keySecret,
      top: options.top ?? 20,
    };
    void limiter.close();
    return {
      domain: rules.domain,
      version: rules.version,
      ...counts,
      from,
      to,
      hours,
      rules: [...tallies.values()].map((tally) => tally.finish(hours, display)),
    };
  }

  return {
    add,
    skip(kind) {
      counts[kind]++;
    },
    finish,
  };
}
