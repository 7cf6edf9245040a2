import { describe, expect, it } from 'vitest';
import { LinkedStore, Timeline } from '../../../../test/support/regions-timeline.js';
import { createLimiter, type Limiter } from '../engine/engine.js';
import type { Decision, RegionEvent } from '../observe/contract.js';
import { compileRules } from '../rules/compile.js';
import type { RuleSpec } from '../rules/schema.js';
import { MemoryStore } from '../store/memory.js';

const LIMIT = 1000;

function rules(extra: Partial<RuleSpec> = {}) {
  return compileRules({
    rules: [
      {
        name: 'search_global',
        key: [],
        global: true,
        limit: { requests: LIMIT, per: '1s' },
        algorithm: 'fixed_window',
        scope: 'global',
        ...extra,
      },
    ],
  });
}

interface Region {
  readonly name: string;
  readonly limiter: Limiter;
  readonly events: RegionEvent[];
  readonly log: string[];
  admitted: number;
  denied: number;
  marked: number;
}

/** Three regions (one gateway each, their own MemoryStore) around one global store on a link. */
function world(
  options: { latencyMs?: number; syncMs?: number; rules?: Partial<RuleSpec>; names?: string[] } = {},
) {
  const timeline = new Timeline();
  const global = new LinkedStore(timeline, options.latencyMs ?? 50);
  const compiled = rules(options.rules);
  const regions = (options.names ?? ['us', 'eu', 'ap']).map((name): Region => {
    const events: RegionEvent[] = [];
    const log: string[] = [];
    const limiter = createLimiter({
      rules: compiled,
      store: new MemoryStore(),
      clock: timeline.clock,
      observer: { onRegion: (event) => void events.push(event) },
      logger: { warn: (line) => void log.push(line) },
      regions: { region: name, global, syncMs: options.syncMs ?? 100, schedule: timeline.schedule },
    });
    return { name, limiter, events, log, admitted: 0, denied: 0, marked: 0 };
  });
  /** Sends `rates[i]` requests per second to region i for `ms`, spread over 10 ms steps. */
  async function traffic(rates: readonly number[], ms: number): Promise<void> {
    const carry = rates.map(() => 0);
    await timeline.advance(
      ms,
      () => {
        rates.forEach((rate, i) => {
          carry[i]! += rate / 100;
          while (carry[i]! >= 1) {
            carry[i]! -= 1;
            const region = regions[i]!;
            const decision = region.limiter.decide({}) as Decision;
            if (decision.allowed) region.admitted++;
            else region.denied++;
            if (decision.reason === 'global_unreachable') region.marked++;
          }
        });
      },
      10,
    );
  }
  const reset = () => {
    for (const region of regions) region.admitted = region.denied = region.marked = 0;
  };
  return { timeline, global, regions, traffic, reset };
}

/** Advances to the start of the next whole second (a fixed window's start). */
async function toNextWindow(timeline: Timeline): Promise<void> {
  await timeline.advance(1000 - (timeline.now % 1000));
}

describe('global budgets across regions', () => {
  it('counts a global rule in the regional store against the grant and keeps the regions within the limit', async () => {
    const w = world();
    await toNextWindow(w.timeline);
    // Demand 80/15/5 of twice the limit, for 5 windows.
    const totals: number[] = [];
    for (let window = 0; window < 5; window++) {
      w.reset();
      await w.traffic([1600, 300, 100], 1000);
      totals.push(w.regions.reduce((sum, r) => sum + r.admitted, 0));
    }
    for (const total of totals.slice(1)) expect(total).toBeLessThanOrEqual(LIMIT);
    // Steady windows use most of the budget (what a round's slices leave unspent at the window's end aside).
    expect(Math.min(...totals.slice(1))).toBeGreaterThan(LIMIT * 0.8);
  });
});
