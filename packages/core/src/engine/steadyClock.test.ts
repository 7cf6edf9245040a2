import { afterEach, describe, expect, it, vi } from 'vitest';
import { compileRules } from '../rules/compile.js';
import type { Store } from '../store/contract.js';
import { MemoryStore } from '../store/memory.js';
import { createLimiter } from './engine.js';
import { steadyClock } from './steadyClock.js';

const T = Date.UTC(2026, 10, 30, 12, 0, 30);
const HOUR = 3_600_000;

describe('steadyClock', () => {
  it('follows the wall clock forward, and runs on by the monotonic clock when it steps back', () => {
    let wall = T;
    let mono = 1000;
    const clock = steadyClock(
      () => wall,
      () => mono,
    );
    expect(clock()).toBe(T);
    wall += 500;
    mono += 500;
    expect(clock()).toBe(T + 500);
    wall -= HOUR; // the step back
    mono += 250;
    expect(clock()).toBe(T + 750);
    mono += 1000;
    wall += 1000;
    expect(clock()).toBe(T + 1750);
    wall = T + 2 * HOUR; // a step forward is followed
    mono += 10;
    expect(clock()).toBe(T + 2 * HOUR);
  });

  it('reads the monotonic clock once per wall-clock millisecond, and never answers less than before', () => {
    let wall = T;
    let mono = 0;
    let monoReads = 0;
    const clock = steadyClock(
      () => wall,
      () => {
        monoReads += 1;
        return mono;
      },
    );
    expect([clock(), clock(), clock()]).toEqual([T, T, T]);
    expect(monoReads).toBe(1);
    wall -= HOUR; // a step back, then readings within one stepped-back millisecond
    mono += 0.6;
    const stepped = [clock(), clock()];
    mono += 0.6;
    wall += 1;
    stepped.push(clock());
    expect(stepped).toEqual([T, T, T + 1]);
    expect(monoReads).toBe(3);
  });
});

describe('a limiter on the default MemoryStore when the system clock steps back an hour', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each(['fixed_window', 'sliding_window'] as const)(
    '%s: an exhausted window stays exhausted',
    async (algorithm) => {
      vi.useFakeTimers({ toFake: ['Date'], now: T });
      const rules = compileRules({
        domain: `clock_${algorithm}`,
        rules: [{ name: 'r', key: ['ip'], algorithm, limit: { requests: 3, per: '1m' } }],
      });
      const limiter = createLimiter({ rules, logger: { warn() {} } });
      const ip = { ip: '192.0.2.1' };
      for (let i = 0; i < 3; i++) expect((await limiter.check(ip)).allowed).toBe(true);
      expect((await limiter.check(ip)).allowed).toBe(false);
      vi.setSystemTime(T - HOUR);
      const after = await limiter.check(ip);
      expect(after.allowed).toBe(false);
      // The wait stays within the window: no hour-long lock-out either.
      expect(after.retryAfterMs).toBeGreaterThan(0);
      expect(after.retryAfterMs).toBeLessThanOrEqual(120_000);
      await limiter.close();
    },
  );
});

describe('a limiter on a store of its own (not in process) when the system clock steps back an hour', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('hands the store times that never go back, so its counters are not read as stale', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: T });
    const seen: number[] = [];
    const memory = new MemoryStore();
    // A remote store as the engine sees one: no evaluateNow, answers by promise.
    const store: Store = {
      evaluate: (checks, now) => {
        seen.push(now);
        return memory.evaluate(checks, now);
      },
      release: (leases, now) => memory.release(leases, now),
      close: () => memory.close(),
    };
    const rules = compileRules({
      domain: 'clock_remote',
      rules: [{ name: 'r', key: ['ip'], algorithm: 'fixed_window', limit: { requests: 2, per: '1m' } }],
    });
    const limiter = createLimiter({ rules, store, logger: { warn() {} } });
    const ip = { ip: '192.0.2.2' };
    expect((await limiter.check(ip)).allowed).toBe(true);
    expect((await limiter.check(ip)).allowed).toBe(true);
    vi.setSystemTime(T - HOUR);
    expect((await limiter.check(ip)).allowed).toBe(false);
    expect(seen.length).toBe(3);
    expect(seen[2]).toBeGreaterThanOrEqual(seen[1]!);
    expect(seen[2]! - seen[1]!).toBeLessThan(60_000);
    await limiter.close();
  });
});
