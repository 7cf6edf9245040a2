/**
 * Open-loop HTTP load for the regions tests: requests at a steady rate over real connections (undici), each
 * timed from send to the end of its body; the server's decisions are counted by {@link Tally}.
 */
import type { Decision, Descriptors, Limiter, Observer, RegionEvent } from '@sluice/core';
import { Pool } from 'undici';

/** What one load run saw from the client's side. */
export interface LoadResult {
  /** Latency of each answered request, ms, and when it was sent (ms since the run began). */
  readonly latencies: number[];
  readonly sentAt: number[];
  readonly statuses: Map<number, number>;
  /** Requests not sent because `maxInFlight` were still out (the server fell behind). */
  skipped: number;
  errors: number;
}

/** Options of {@link runLoad}. */
export interface LoadOptions {
  readonly url: string;
  /** Requests per second. */
  readonly rps: number;
  readonly durationMs: number;
  readonly path?: string;
  /** Headers of the i-th request (an API key, say). */
  readonly headers?: (i: number) => Record<string, string>;
  readonly maxInFlight?: number;
}

const TICK_MS = 5;

/**
 * Calls `send(g, i)` for the i-th request of stream g, each stream at its own steady rate, as many as are due
 * at each tick, for `durationMs`; resolves once every request sent has settled.
 */
export async function pace(
  rates: readonly number[],
  durationMs: number,
  send: (g: number, i: number) => Promise<unknown> | undefined,
): Promise<void> {
  const sent = rates.map(() => 0);
  const out = new Set<Promise<unknown>>();
  const start = performance.now();
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const elapsed = performance.now() - start;
      if (elapsed >= durationMs) {
        clearInterval(timer);
        resolve();
        return;
      }
      rates.forEach((rps, g) => {
        for (const due = Math.floor((rps * elapsed) / 1000); sent[g]! < due; sent[g]!++) {
          const request = send(g, sent[g]!)?.catch(() => undefined);
          if (request === undefined) continue;
          out.add(request);
          void request.then(() => out.delete(request));
        }
      });
    }, TICK_MS);
  });
  await Promise.all(out);
}

/** Sends `rps` GET requests a second for `durationMs` over a pool of keep-alive connections. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const pool = new Pool(options.url, { connections: 16, pipelining: 1 });
  const result: LoadResult = { latencies: [], sentAt: [], statuses: new Map(), skipped: 0, errors: 0 };
  const maxInFlight = options.maxInFlight ?? 64;
  const path = options.path ?? '/search';
  const began = performance.now();
  let inFlight = 0;
  const one = async (i: number) => {
    const started = performance.now();
    inFlight++;
    try {
      const response = await pool.request({ method: 'GET', path, headers: options.headers?.(i) ?? {} });
      await response.body.dump();
      result.latencies.push(performance.now() - started);
      result.sentAt.push(started - began);
      result.statuses.set(response.statusCode, (result.statuses.get(response.statusCode) ?? 0) + 1);
    } catch {
      result.errors++;
    } finally {
      inFlight--;
    }
  };
  await pace([options.rps], options.durationMs, (_, i) => {
    if (inFlight < maxInFlight) return one(i);
    result.skipped++;
    return undefined;
  });
  await pool.close();
  return result;
}

/** The latencies of requests sent at least `afterMs` into the run (past the warm-up). */
export function settledLatencies(result: LoadResult, afterMs: number): number[] {
  return result.latencies.filter((_, i) => result.sentAt[i]! >= afterMs);
}

/** The q-quantile (0..1) of some values, by nearest rank. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** One window's decisions of one gateway. */
export interface WindowCount {
  admitted: number;
  denied: number;
  /** Decisions marked failedOpen with reason global_unreachable. */
  unreachable: number;
}

/**
 * The server's side: each decision counted in the window of the `scope: global` rule it was counted in (its
 * end is the decision's time plus that rule's resetMs, a multiple of the window), and the region's events.
 */
export class Tally {
  readonly windows = new Map<number, WindowCount>();
  readonly events: RegionEvent[] = [];
  /** When each event came, epoch ms. */
  readonly eventTimes: number[] = [];
  readonly reasons = new Map<string, number>();
  readonly #rule: string;
  readonly #windowMs: number;

  constructor(rule: string, windowMs: number) {
    this.#rule = rule;
    this.#windowMs = windowMs;
  }

  readonly observer: Observer = {
    onDecision: (decision: Decision) => this.#count(decision),
    onRegion: (event: RegionEvent) => {
      if (event.kind === 'round') return;
      this.events.push(event);
      this.eventTimes.push(Date.now());
    },
  };

  /** The window (its start, epoch ms) counts of windows fully inside [from, to). */
  between(from: number, to: number): [number, WindowCount][] {
    return [...this.windows]
      .filter(([start]) => start >= from && start + this.#windowMs <= to)
      .sort((a, b) => a[0] - b[0]);
  }

  /** Events of a kind (that came at `since` or later). */
  count(kind: RegionEvent['kind'], since = 0): number {
    return this.events.filter((e, i) => e.kind === kind && this.eventTimes[i]! >= since).length;
  }

  #count(decision: Decision): void {
    const result = decision.results.find((r) => r.rule === this.#rule);
    if (result === undefined) return;
    const end = Math.round((Date.now() + result.resetMs) / this.#windowMs) * this.#windowMs;
    const start = end - this.#windowMs;
    let row = this.windows.get(start);
    if (row === undefined) {
      row = { admitted: 0, denied: 0, unreachable: 0 };
      this.windows.set(start, row);
    }
    if (decision.allowed) row.admitted++;
    else row.denied++;
    if (decision.failedOpen && decision.reason === 'global_unreachable') row.unreachable++;
    this.reasons.set(decision.reason, (this.reasons.get(decision.reason) ?? 0) + 1);
  }
}

/** One gateway paced by {@link paceLimiters}: its limiter and its requests per second. */
export interface PacedGateway {
  readonly limiter: Pick<Limiter, 'check'>;
  readonly rps: number;
  readonly descriptors: (i: number) => Descriptors;
}

/**
 * In-process load (no HTTP) for the store tests: each gateway's checks at its steady rate for `durationMs`;
 * resolves once every check has settled. The limiters' observers count the decisions.
 */
export function paceLimiters(gateways: readonly PacedGateway[], durationMs: number): Promise<void> {
  return pace(
    gateways.map((g) => g.rps),
    durationMs,
    (g, i) => gateways[g]!.limiter.check(gateways[g]!.descriptors(i)),
  );
}
