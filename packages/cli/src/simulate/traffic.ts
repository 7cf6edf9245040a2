import type { Decision, Descriptors } from '@sluice/core';
import type { ReplayRequest } from '../replay/request.js';
import type { Pattern } from './patterns.js';
import { exponentialGapMs } from './random.js';

/** A retry waiting for its time. */
interface Retry {
  readonly time: number;
  readonly client: number;
  readonly attempt: number;
}

/** A binary min-heap of retries by time: a retry storm holds thousands at once. */
class RetryQueue {
  readonly #items: Retry[] = [];

  get size(): number {
    return this.#items.length;
  }

  peek(): Retry | undefined {
    return this.#items[0];
  }

  push(item: Retry): void {
    const items = this.#items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((items[parent] as Retry).time <= item.time) break;
      items[i] = items[parent] as Retry;
      i = parent;
    }
    items[i] = item;
  }

  pop(): Retry | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length === 0 || last === undefined) return top;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= items.length) break;
      const right = left + 1;
      const child =
        right < items.length && (items[right] as Retry).time < (items[left] as Retry).time ? right : left;
      if ((items[child] as Retry).time >= last.time) break;
      items[i] = items[child] as Retry;
      i = child;
    }
    items[i] = last;
    return top;
  }
}

/** Counts of a simulated run, besides the replay report. */
export interface TrafficCounts {
  /** First attempts. */
  requests: number;
  /** Retries sent by denied clients (retry-storm). */
  retries: number;
  /** Clients that gave up after their last retry was denied. */
  gaveUp: number;
}

/** Requests between two progress reports. */
const PROGRESS_EVERY = 4096;

/**
 * Generates a pattern's requests in time order from `start` for `durationMs` and hands each to `decide`; denied
 * requests of a retrying pattern come back as retries (sent even after the end, until each gives up). `descriptorsOf` gives a client's descriptors.
 */
export function runTraffic(
  pattern: Pattern,
  options: {
    readonly start: number;
    readonly durationMs: number;
    readonly random: () => number;
    /** Told every few thousand requests: how many were sent, and the share of simulated time gone by. */
    readonly progress?: (sent: number, fraction: number) => void;
  },
  descriptorsOf: (client: number) => Descriptors,
  decide: (request: ReplayRequest) => Decision,
): TrafficCounts {
  const { start, durationMs, random } = options;
  const counts: TrafficCounts = { requests: 0, retries: 0, gaveUp: 0 };
  const retries = new RetryQueue();
  const end = start + durationMs;
  let next = start + exponentialGapMs(random, Math.max(1e-9, pattern.rate(0)));
  for (;;) {
    // New requests stop at the end of the run; retries already on their way are still sent.
    const arriving = next < end;
    const retry = retries.peek();
    if (retry === undefined && !arriving) break;
    const retryFirst = retry !== undefined && (!arriving || retry.time <= next);
    let time: number;
    let client: number;
    let attempt: number;
    if (retryFirst && retry !== undefined) {
      retries.pop();
      ({ time, client, attempt } = retry);
      counts.retries++;
    } else {
      time = next;
      client = pattern.client(counts.requests, random);
      attempt = 0;
      counts.requests++;
      next += exponentialGapMs(random, Math.max(1e-9, pattern.rate(next - start)));
    }
    const decision = decide({ time: Math.floor(time), descriptors: descriptorsOf(client) });
    const sent = counts.requests + counts.retries;
    if (options.progress !== undefined && sent % PROGRESS_EVERY === 0) {
      options.progress(sent, Math.min(1, (time - start) / durationMs));
    }
    if (decision.allowed || pattern.retries === undefined) continue;
    if (attempt >= pattern.retries.max) counts.gaveUp++;
    else retries.push({ time: time + pattern.retries.waitMs(random), client, attempt: attempt + 1 });
  }
  return counts;
}
