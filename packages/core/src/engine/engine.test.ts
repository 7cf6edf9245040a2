import { describe, expect, it } from 'vitest';
import {
  type Check,
  type CheckResult,
  ConfigError,
  compileRules,
  createLimiter,
  type Lease,
  MemoryStore,
  type Observer,
  type Store,
  StoreError,
} from '../index.js';

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);

/** A real MemoryStore that records every call it gets. */
class RecordingStore implements Store {
  readonly calls: Check[][] = [];
  readonly inner = new MemoryStore();
  evaluate(checks: readonly Check[], now: number): Promise<CheckResult[]> {
    this.calls.push([...checks]);
    return this.inner.evaluate(checks, now);
  }
  release(leases: readonly Lease[], now: number): Promise<void> {
    return this.inner.release(leases, now);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

/** A real MemoryStore whose answer is held until `answer()`: a call in flight, on demand. */
class HeldStore extends RecordingStore {
  #answer: (() => void) | undefined;
  override evaluate(checks: readonly Check[], now: number): Promise<CheckResult[]> {
    return new Promise((resolve) => {
      this.#answer = () => resolve(super.evaluate(checks, now));
    });
  }
  answer(): void {
    this.#answer?.();
  }
}

/** A store whose every call fails the way a dead Redis does. */
class BrokenStore implements Store {
  evaluate(): Promise<CheckResult[]> {
    return Promise.reject(new StoreError('ERR_SLUICE_STORE', 'connection refused'));
  }
  release(): Promise<void> {
    return Promise.reject(new StoreError('ERR_SLUICE_STORE', 'connection refused'));
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

const seedRules = compileRules({
  domain: 'public_api',
  rules: [
    { name: 'anon_per_ip', match: { auth: 'anonymous' }, key: ['ip'], limit: { requests: 60, per: '60s' } },
    {
      name: 'key_default',
      match: { auth: 'api_key' },
      key: ['api_key'],
      limit: { requests: 600, per: '60s' },
    },
    {
      name: 'key_override_acme',
      match: { auth: 'api_key', tenant: 'acme' },
      key: ['api_key'],
      limit: { requests: 3000, per: '60s' },
      overrides: 'key_default',
    },
    {
      name: 'search_global',
      match: { route: '/search' },
      global: true,
      key: [],
      limit: { requests: 5, per: '1s' },
      algorithm: 'token_bucket',
      mode: 'shadow',
    },
  ],
});

function manualClock(start = T0) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

async function checkTimes(
  limiter: ReturnType<typeof createLimiter>,
  descriptors: Record<string, string>,
  n: number,
) {
  const decisions = [];
  for (let i = 0; i < n; i++) decisions.push(await limiter.check(descriptors));
  return decisions;
}

describe('createLimiter', () => {
  it('holds an api key to its rule and names the rule when it denies', async () => {
    const limiter = createLimiter({ rules: seedRules, clock: () => T0 });
    const decisions = await checkTimes(limiter, { auth: 'api_key', api_key: 'k1' }, 601);
    expect(decisions.slice(0, 600).every((d) => d.allowed)).toBe(true);
    const last = decisions[600]!;
    expect(last).toMatchObject({ allowed: false, rule: 'key_default', reason: 'limit', remaining: 0 });
    expect(last.retryAfterMs).toBe(60_100); // next window, once the 600 weigh at most 599
    expect(last.version).toBe(seedRules.version);
  });

  it('gives an overriding rule its own limit instead of stacking the overridden one', async () => {
    const limiter = createLimiter({ rules: seedRules, clock: () => T0 });
    const acme = { auth: 'api_key', api_key: 'k-acme', tenant: 'acme' };
    const decisions = await checkTimes(limiter, acme, 601);
    expect(decisions.every((d) => d.allowed)).toBe(true);
    expect(decisions[600]!.results.map((r) => r.rule)).toEqual(['key_override_acme']);
  });

  it('lets a client through after exactly retryAfterMs, and not a millisecond sooner', async () => {
    const clock = manualClock(T0 + 15_000);
    const limiter = createLimiter({ rules: seedRules, clock: clock.now });
    const ip = { auth: 'anonymous', ip: '192.0.2.1' };
    const decisions = await checkTimes(limiter, ip, 61);
    const wait = decisions[60]!.retryAfterMs;
    expect(wait).toBe(46_000); // 45 s to the next window, then 1 s until the 60 weigh less than 59
    clock.advance(wait - 1);
    expect((await limiter.check(ip)).allowed).toBe(false);
    clock.advance(1);
    expect((await limiter.check(ip)).allowed).toBe(true);
  });

  it('never denies for a shadow rule, but marks its would-be denials', async () => {
    const limiter = createLimiter({ rules: seedRules, clock: () => T0 });
    const search = { auth: 'api_key', api_key: 'k2', route: '/search' };
    const decisions = await checkTimes(limiter, search, 8);
    expect(decisions.every((d) => d.allowed)).toBe(true);
    const shadow = decisions[7]!.results.find((r) => r.rule === 'search_global')!;
    expect(shadow).toMatchObject({ mode: 'shadow', shadowDenied: true, allowed: true });
    expect(decisions[4]!.results.find((r) => r.rule === 'search_global')!.shadowDenied).toBe(false);
  });

  it('with dryRun, treats every rule as shadow: counts, reports would-be denials, never denies', async () => {
    const limiter = createLimiter({ rules: seedRules, clock: () => T0, dryRun: true });
    const ip = { auth: 'anonymous', ip: '192.0.2.9' };
    const decisions = await checkTimes(limiter, ip, 62);
    expect(decisions.every((d) => d.allowed)).toBe(true);
    expect(decisions[60]!.results[0]).toMatchObject({
      rule: 'anon_per_ip',
      mode: 'shadow',
      shadowDenied: true,
    });
    expect(decisions[59]!.results[0]!.shadowDenied).toBe(false);
    expect(limiter.explain(ip).rules[0]!.effectiveMode).toBe('shadow');
  });

  it('with dryRun, a rule that fails closed on a store error lets the request through', async () => {
    const rules = compileRules({
      rules: [{ name: 'strict', key: ['user'], limit: { requests: 5, per: '1m' }, on_store_error: 'deny' }],
    });
    const enforcing = createLimiter({ rules, store: new BrokenStore(), clock: () => T0 });
    expect((await enforcing.check({ user: 'u' })).allowed).toBe(false);
    const dry = createLimiter({ rules, store: new BrokenStore(), clock: () => T0, dryRun: true });
    expect((await dry.check({ user: 'u' })).allowed).toBe(true);
  });

  it('refuses rules given as a promise (a missing await) or as anything but a table or a source', () => {
    const pending = Promise.resolve(seedRules);
    expect(() => createLimiter({ rules: pending as never })).toThrow(
      'rules is a Promise: did you forget await? (rules: await redisRules(...))',
    );
    expect(() => createLimiter({ rules: { domain: 'd', rules: [] } as never })).toThrow(ConfigError);
    expect(() => createLimiter({ rules: undefined as never })).toThrow(/rules must be a compiled rule table/);
  });

  it('evaluates every matched rule in one store call', async () => {
    const store = new RecordingStore();
    const limiter = createLimiter({ rules: seedRules, store, clock: () => T0 });
    await limiter.check({ auth: 'api_key', api_key: 'k3', route: '/search' });
    expect(store.calls.map((c) => c.map((x) => x.rule))).toEqual([['key_default', 'search_global']]);
  });

  it('adds route-level rules to the same store call, or evaluates them alone', async () => {
    const store = new RecordingStore();
    const route = compileRules({
      rules: [{ name: 'search_per_key', key: ['api_key'], limit: { requests: 2, per: '1m' } }],
    });
    const limiter = createLimiter({ rules: seedRules, store, clock: () => T0 });
    const d = { auth: 'api_key', api_key: 'k4' };
    await limiter.check(d, { rules: route });
    await limiter.check(d, { rules: route, global: false });
    const third = await limiter.check(d, { rules: route, global: false });
    expect(store.calls.map((c) => c.map((x) => x.rule))).toEqual([
      ['key_default', 'search_per_key'],
      ['search_per_key'],
      ['search_per_key'],
    ]);
    expect(third).toMatchObject({ allowed: false, rule: 'search_per_key' });
  });

  it('names the denying rule with the longest retry time', async () => {
    const rules = compileRules({
      rules: [
        { name: 'per_second', key: ['user'], limit: { requests: 1, per: '1s' }, algorithm: 'fixed_window' },
        { name: 'per_hour', key: ['user'], limit: { requests: 1, per: '1h' }, algorithm: 'fixed_window' },
      ],
    });
    const limiter = createLimiter({ rules, clock: () => T0 });
    await limiter.check({ user: 'u' });
    const denied = await limiter.check({ user: 'u' });
    expect(denied).toMatchObject({ allowed: false, rule: 'per_hour', retryAfterMs: 3_600_000 });
  });

  it('enforces a rollout on a stable share of keys and shadows the rest', () => {
    const rules = compileRules({
      rules: [{ name: 'half', key: ['user'], limit: { requests: 1, per: '1m' }, rollout: 50 }],
    });
    const limiter = createLimiter({ rules, clock: () => T0 });
    const modes = Array.from(
      { length: 400 },
      (_, i) => limiter.explain({ user: `u${i}` }).rules[0]!.effectiveMode,
    );
    const enforced = modes.filter((m) => m === 'enforce').length;
    expect(enforced).toBeGreaterThan(140);
    expect(enforced).toBeLessThan(260);
    expect(limiter.explain({ user: 'u7' }).rules[0]!.effectiveMode).toBe(modes[7]);
  });

  describe('decide', () => {
    const rules = compileRules({
      rules: [{ name: 'per_user', key: ['user'], limit: { requests: 1, per: '1m' } }],
    });

    it('answers at once, without a promise, when the store is in process', () => {
      const limiter = createLimiter({ rules, clock: () => T0 });
      const first = limiter.decide({ user: 'u' });
      expect(first).not.toBeInstanceOf(Promise);
      expect(first).toMatchObject({ allowed: true, rule: 'per_user', remaining: 0 });
      expect(limiter.decide({ user: 'u' })).toMatchObject({ allowed: false, rule: 'per_user' });
    });

    it('answers with a promise when the store is remote', async () => {
      const limiter = createLimiter({ rules, store: new RecordingStore(), clock: () => T0 });
      const pending = limiter.decide({ user: 'u' });
      expect(pending).toBeInstanceOf(Promise);
      expect(await pending).toMatchObject({ allowed: true, rule: 'per_user' });
    });

    it('throws on an invalid cost where check rejects', async () => {
      const limiter = createLimiter({ rules });
      expect(() => limiter.decide({ user: 'u' }, { cost: -1 })).toThrow(ConfigError);
      await expect(limiter.check({ user: 'u' }, { cost: -1 })).rejects.toThrow(ConfigError);
    });
  });

  describe('cost', () => {
    const rules = compileRules({
      rules: [
        {
          name: 'by_batch',
          key: ['user'],
          limit: { requests: 10, per: '1m' },
          cost: { descriptor: 'batch', max: 4 },
        },
        {
          name: 'by_method',
          key: ['user'],
          limit: { requests: 10, per: '1m' },
          cost: { by: 'method', values: { GET: 1, POST: 3 }, default: 2 },
        },
        { name: 'from_code', key: ['user'], limit: { requests: 10, per: '1m' } },
      ],
    });
    const remaining = async (d: Record<string, string>, cost?: number) => {
      const limiter = createLimiter({ rules, clock: () => T0 });
      const decision = await limiter.check(d, cost === undefined ? {} : { cost });
      return Object.fromEntries(decision.results.map((r) => [r.rule, r.remaining]));
    };

    it('prices a request per rule: descriptor with a cap, price list, cost from code', async () => {
      expect(await remaining({ user: 'u', batch: '3', method: 'POST' }, 5)).toEqual({
        by_batch: 7,
        by_method: 7,
        from_code: 5,
      });
      expect(await remaining({ user: 'u', batch: '99', method: 'PATCH' })).toEqual({
        by_batch: 6,
        by_method: 8,
        from_code: 9,
      });
    });

    it('charges the cap for a descriptor cost that is not a whole number', async () => {
      expect((await remaining({ user: 'u', batch: 'abc' })).by_batch).toBe(6);
      expect((await remaining({ user: 'u', batch: '-2' })).by_batch).toBe(6);
      expect((await remaining({ user: 'u', batch: '1.5' })).by_batch).toBe(6);
    });

    it('rejects a cost from code that is negative, fractional or not finite', async () => {
      const limiter = createLimiter({ rules, clock: () => T0 });
      for (const cost of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
        await expect(limiter.check({ user: 'u' }, { cost })).rejects.toThrow(ConfigError);
      }
    });
  });

  describe('store failure', () => {
    const rules = compileRules({
      rules: [
        { name: 'open', key: ['user'], limit: { requests: 1, per: '1m' } },
        {
          name: 'closed',
          match: { route: '/pay' },
          key: ['user'],
          limit: { requests: 1, per: '1m' },
          on_store_error: 'deny',
        },
      ],
    });

    it('fails open by default, says so, and tells the observer', async () => {
      const errors: string[] = [];
      const observer: Observer = { onStoreError: (kind) => errors.push(kind) };
      const limiter = createLimiter({ rules, store: new BrokenStore(), observer });
      const decision = await limiter.check({ user: 'u' });
      expect(decision).toMatchObject({ allowed: true, failedOpen: true, reason: 'store_error' });
      expect(errors).toEqual(['error']);
    });

    it('fails closed for a rule with on_store_error: deny', async () => {
      const limiter = createLimiter({ rules, store: new BrokenStore() });
      const decision = await limiter.check({ user: 'u', route: '/pay' });
      expect(decision).toMatchObject({ allowed: false, rule: 'closed', reason: 'store_error' });
      expect(decision.retryAfterMs).toBeGreaterThan(0);
    });

    it('times out a store that does not answer', async () => {
      const silent: Store = {
        evaluate: () => new Promise(() => {}),
        release: () => Promise.resolve(),
        close: () => Promise.resolve(),
      };
      const limiter = createLimiter({ rules, store: silent, timeoutMs: 20 });
      expect(await limiter.check({ user: 'u' })).toMatchObject({
        allowed: true,
        failedOpen: true,
        reason: 'timeout',
      });
    });

    it('adds no backstop timer to a store that bounds its own calls (timeLimited)', async () => {
      const slowAnswer = (): Promise<CheckResult[]> =>
        new Promise((resolve) =>
          setTimeout(
            () => resolve([{ allowed: true, limit: 1, remaining: 0, resetMs: 60_000, retryAfterMs: 0 }]),
            60,
          ),
        );
      const bounded: Store = {
        evaluate: slowAnswer,
        timeLimited: true,
        release: () => Promise.resolve(),
        close: () => Promise.resolve(),
      };
      const unbounded: Store = { ...bounded, timeLimited: false };
      const trusted = createLimiter({ rules, store: bounded, timeoutMs: 20 });
      const guarded = createLimiter({ rules, store: unbounded, timeoutMs: 20 });
      expect(await trusted.check({ user: 'u' })).toMatchObject({ allowed: true, failedOpen: false });
      expect(await guarded.check({ user: 'u' })).toMatchObject({ failedOpen: true, reason: 'timeout' });
    });

    it('keeps an observer that throws out of the request path', async () => {
      const observer: Observer = {
        onDecision: () => {
          throw new Error('observer bug');
        },
      };
      const limiter = createLimiter({ rules, observer });
      expect((await limiter.check({ user: 'u' })).allowed).toBe(true);
    });

    it('rejects a store without the three methods at construction', () => {
      expect(() =>
        createLimiter({ rules, store: { evaluate: () => Promise.resolve([]) } as unknown as Store }),
      ).toThrow(/store must have a release\(\) method/);
    });
  });

  describe('health', () => {
    const rules = compileRules({
      rules: [{ name: 'per_user', key: ['user'], limit: { requests: 5, per: '1m' } }],
    });

    /** A real MemoryStore behind a switch: `down` makes calls fail as a dead Redis does. */
    class SwitchableStore extends RecordingStore {
      down = false;
      override evaluate(checks: readonly Check[], now: number): Promise<CheckResult[]> {
        if (this.down) return Promise.reject(new StoreError('ERR_SLUICE_STORE', 'connection refused'));
        return super.evaluate(checks, now);
      }
    }

    it('is healthy with an in-process store, and says what its stores report', async () => {
      const limiter = createLimiter({ rules, clock: () => T0 });
      await limiter.check({ user: 'u' });
      const health = limiter.health();
      expect(health).toMatchObject({
        healthy: true,
        connected: true,
        breaker: 'closed',
        pending: 0,
        observerFailures: 0,
      });
      expect(health.failingOpenSince).toBeUndefined();
    });

    it('reports failing open since the first failed call, and recovers with the store', async () => {
      const clock = manualClock();
      const store = new SwitchableStore();
      const limiter = createLimiter({ rules, store, clock: clock.now });
      store.down = true;
      expect((await limiter.check({ user: 'u' })).failedOpen).toBe(true);
      clock.advance(5_000);
      await limiter.check({ user: 'u' });
      expect(limiter.health()).toMatchObject({ healthy: false, connected: false, failingOpenSince: T0 });
      store.down = false;
      await limiter.check({ user: 'u' });
      expect(limiter.health()).toMatchObject({ healthy: true, connected: true });
      expect(limiter.health().failingOpenSince).toBeUndefined();
    });

    it('counts store calls in flight', async () => {
      const slow = new HeldStore();
      const limiter = createLimiter({ rules, store: slow, clock: () => T0 });
      const pending = limiter.check({ user: 'u' });
      expect(limiter.health().pending).toBe(1);
      slow.answer();
      await pending;
      expect(limiter.health().pending).toBe(0);
    });

    it("prefers the store's own report (breaker, pending), and reads a throwing health() as unreachable", () => {
      const reporting: Store = {
        evaluate: () => Promise.resolve([]),
        release: () => Promise.resolve(),
        close: () => Promise.resolve(),
        health: () => ({ connected: true, breaker: 'open', pending: 7, failingOpenSince: T0 - 1000 }),
      };
      const open = createLimiter({ rules, store: reporting }).health();
      expect(open).toMatchObject({
        healthy: false,
        breaker: 'open',
        pending: 7,
        failingOpenSince: T0 - 1000,
      });
      expect(open.store).toMatchObject({ breaker: 'open', pending: 7 });
      const throwing: Store = {
        ...reporting,
        health: () => {
          throw new Error('health bug');
        },
      };
      expect(createLimiter({ rules, store: throwing }).health()).toMatchObject({
        healthy: false,
        connected: false,
      });
    });

    it('counts observer hooks that throw or reject; the request is decided as usual', async () => {
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown) => unhandled.push(reason);
      process.on('unhandledRejection', onUnhandled);
      try {
        const limiter = createLimiter({
          rules,
          clock: () => T0,
          observer: {
            async onDecision() {
              throw new Error('async observer bug');
            },
            onLeases() {
              throw new Error('never called: no leases');
            },
            onRulesLoaded() {
              throw new Error('sync observer bug');
            },
          },
        });
        const decision = await limiter.check({ user: 'u' });
        expect(decision.allowed).toBe(true);
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(limiter.health().observerFailures).toBe(2);
        expect(unhandled).toEqual([]);
      } finally {
        process.off('unhandledRejection', onUnhandled);
      }
    });
  });

  describe('concurrency leases', () => {
    const rules = compileRules({
      rules: [
        {
          name: 'exports',
          key: ['user'],
          algorithm: 'concurrency',
          limit: { concurrent: 1, lease: '30s' },
        },
      ],
    });

    it('holds a lease until released, once', async () => {
      const leases: number[] = [];
      const limiter = createLimiter({
        rules,
        clock: () => T0,
        observer: { onLeases: (_, d) => leases.push(d) },
      });
      const first = await limiter.check({ user: 'u' });
      expect(first.leases).toHaveLength(1);
      expect((await limiter.check({ user: 'u' })).allowed).toBe(false);
      await limiter.release(first);
      await limiter.release(first);
      expect(leases).toEqual([1, -1]);
      expect((await limiter.check({ user: 'u' })).allowed).toBe(true);
    });
  });

  describe('leaky_bucket places', () => {
    const rules = compileRules({
      rules: [
        {
          name: 'smooth',
          key: ['user'],
          algorithm: 'leaky_bucket',
          limit: { requests: 1, per: '1s', burst: 2 },
        },
      ],
    });

    it('gives a queued place back on cancel, and keeps it on release (the request was served)', async () => {
      const limiter = createLimiter({ rules, clock: () => T0 });
      expect(await limiter.check({ user: 'u' })).toMatchObject({ allowed: true, delayMs: 0, leases: [] });
      const queued = await limiter.check({ user: 'u' });
      expect(queued).toMatchObject({ allowed: true, delayMs: 1000 });
      expect((await limiter.check({ user: 'u' })).allowed).toBe(false);
      await limiter.release(queued);
      expect((await limiter.check({ user: 'u' })).allowed).toBe(false);
      await limiter.cancel(queued);
      await limiter.cancel(queued);
      expect(await limiter.check({ user: 'u' })).toMatchObject({ allowed: true, delayMs: 1000 });
      expect((await limiter.check({ user: 'u' })).allowed).toBe(false);
    });
  });

  it('counts a scope: local rule in process even when the store is down', async () => {
    const rules = compileRules({
      rules: [
        { name: 'remote', key: ['user'], limit: { requests: 100, per: '1m' } },
        { name: 'in_process', key: ['user'], limit: { requests: 1, per: '1m' }, scope: 'local' },
      ],
    });
    const limiter = createLimiter({ rules, store: new BrokenStore(), clock: () => T0 });
    expect((await limiter.check({ user: 'u' })).allowed).toBe(true);
    expect(await limiter.check({ user: 'u' })).toMatchObject({ allowed: false, rule: 'in_process' });
  });

  it('stops applying a rule after it expires', async () => {
    const rules = compileRules({
      rules: [
        { name: 'incident_block', key: ['ip'], limit: { requests: 0, per: '1m' }, expires: '2026-11-30' },
      ],
    });
    const clock = manualClock(Date.UTC(2026, 10, 30, 23, 59, 59));
    const limiter = createLimiter({ rules, clock: clock.now });
    expect((await limiter.check({ ip: '192.0.2.9' })).allowed).toBe(false);
    clock.advance(1000);
    expect((await limiter.check({ ip: '192.0.2.9' })).allowed).toBe(true);
  });

  it('swaps rules atomically; a check in flight keeps the version it started with', async () => {
    const slow = new HeldStore();
    const limiter = createLimiter({ rules: seedRules, store: slow, clock: () => T0 });
    const pending = limiter.check({ auth: 'anonymous', ip: '192.0.2.3' });
    const next = compileRules({
      domain: 'public_api',
      rules: [{ name: 'other', global: true, key: [], limit: { requests: 1, per: '1s' } }],
    });
    limiter.setRules(next);
    slow.answer();
    expect((await pending).version).toBe(seedRules.version);
    expect(limiter.version).toBe(next.version);
  });

  it('explains the matching rules and their hashed counter tags without a store call', () => {
    const store = new RecordingStore();
    const limiter = createLimiter({ rules: seedRules, store });
    const explained = limiter.explain({
      auth: 'api_key',
      api_key: 'secret-key',
      tenant: 'acme',
      route: '/search',
    });
    expect(explained.rules.map((r) => [r.rule, r.effectiveMode])).toEqual([
      ['key_override_acme', 'enforce'],
      ['search_global', 'shadow'],
    ]);
    expect(explained.rules[0]!.tag).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(JSON.stringify(explained)).not.toContain('secret-key');
    expect(store.calls).toEqual([]);
  });
});
