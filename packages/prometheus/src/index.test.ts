import {
  ConfigError,
  combineObservers,
  compileRules,
  createLimiter,
  hashText,
  MemoryStore,
  type Observer,
  type Store,
} from '@sluice/core';
import { RedisStore, recommendedRedisOptions } from '@sluice/redis';
import { Redis } from 'ioredis';
import { register as globalRegister, Registry } from 'prom-client';
import { describe, expect, test } from 'vitest';
import { randomPrefix, ready, startRedis } from '../../../test/support/redis.js';
import { metricNames, prometheusObserver } from './index.js';

const API_KEY = 'sk_live_VERYSECRET_4242';
const IP = '203.0.113.77';

const rulesV1 = compileRules({
  domain: 'public_api',
  rules: [
    { name: 'per_key', key: ['api_key'], limit: { requests: 2, per: '60s' }, review: '2026-03-01' },
    { name: 'per_ip', key: ['ip'], limit: { requests: 1, per: '60s' }, mode: 'shadow', review: '2026-09-01' },
    {
      name: 'exports',
      match: { route: '/export' },
      key: ['ip'],
      algorithm: 'concurrency',
      limit: { concurrent: 2, lease: '60s' },
    },
  ],
});

const rulesV2 = compileRules({
  domain: 'public_api',
  rules: [{ name: 'per_key', key: ['api_key'], limit: { requests: 5, per: '60s' } }],
});

/** The value of one series in the text format, or undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('prometheusObserver', () => {
  test('counts decisions by rule, mode and outcome; labels never hold keys or IPs', async () => {
    const observer = prometheusObserver();
    const limiter = createLimiter({ rules: rulesV1, observer, clock: () => 0 });
    for (let i = 0; i < 3; i++) await limiter.check({ api_key: API_KEY, ip: IP });
    await limiter.check({ route: '/elsewhere' });
    const text = await observer.metrics();

    expect(sample(text, 'sluice_decisions_total{rule="per_key",mode="enforce",outcome="allowed"}')).toBe(2);
    expect(sample(text, 'sluice_decisions_total{rule="per_key",mode="enforce",outcome="denied"}')).toBe(1);
    expect(sample(text, 'sluice_decisions_total{rule="per_ip",mode="shadow",outcome="allowed"}')).toBe(1);
    expect(sample(text, 'sluice_decisions_total{rule="per_ip",mode="shadow",outcome="shadow_denied"}')).toBe(
      2,
    );
    expect(sample(text, 'sluice_decisions_total{rule="(none)",mode="enforce",outcome="allowed"}')).toBe(1);
    expect(sample(text, 'sluice_retry_after_seconds_count{rule="per_key"}')).toBe(1);
    expect(sample(text, `sluice_rules_info{domain="public_api",version="${rulesV1.version}"}`)).toBe(1);
    expect(sample(text, 'sluice_rules_reloads_total{result="ok"}')).toBe(1);
    for (const secret of [API_KEY, IP, hashText(API_KEY), hashText(IP), 'VERYSECRET', '203.0.113']) {
      expect(text).not.toContain(secret);
    }
  });

  test('rules_info shows only the version in force; rejected reloads are counted', async () => {
    const observer = prometheusObserver();
    const limiter = createLimiter({ rules: rulesV1, observer });
    limiter.setRules(rulesV2);
    observer.onRulesError?.(new Error('rules.yaml:3:5 bad'));
    const text = await observer.metrics();
    expect(sample(text, `sluice_rules_info{domain="public_api",version="${rulesV2.version}"}`)).toBe(1);
    expect(text).not.toContain(rulesV1.version);
    expect(sample(text, 'sluice_rules_reloads_total{result="ok"}')).toBe(2);
    expect(sample(text, 'sluice_rules_reloads_total{result="error"}')).toBe(1);
  });

  test('store errors, failing open and store latency', async () => {
    const observer = prometheusObserver();
    const failing: Store = {
      evaluate: () => Promise.reject(new Error('ECONNREFUSED')),
      release: async () => {},
      close: async () => {},
    };
    const limiter = createLimiter({ rules: rulesV1, observer, store: failing });
    await limiter.check({ api_key: API_KEY });
    observer.onStoreLatency?.(0.003);
    const text = await observer.metrics();
    expect(sample(text, 'sluice_store_errors_total{kind="error"}')).toBe(1);
    expect(sample(text, 'sluice_decisions_total{rule="per_key",mode="enforce",outcome="failed_open"}')).toBe(
      1,
    );
    expect(sample(text, 'sluice_store_duration_seconds_bucket{le="0.005"}')).toBe(1);
    expect(sample(text, 'sluice_store_duration_seconds_bucket{le="0.0025"}')).toBe(0);
  });

  test('active concurrency goes up with leases and back down on release', async () => {
    const observer = prometheusObserver();
    const limiter = createLimiter({ rules: rulesV1, observer });
    const first = await limiter.check({ route: '/export', ip: IP });
    const second = await limiter.check({ route: '/export', ip: IP });
    expect(sample(await observer.metrics(), 'sluice_concurrency_active{rule="exports"}')).toBe(2);
    await limiter.release(first);
    await limiter.release(second);
    expect(sample(await observer.metrics(), 'sluice_concurrency_active{rule="exports"}')).toBe(0);
  });

  test('connections held: leases kept renewed for open connections, by rule, until released', async () => {
    const observer = prometheusObserver();
    const limiter = createLimiter({ rules: rulesV1, observer });
    const stream = await limiter.check({ route: '/export', ip: IP });
    const request = await limiter.check({ route: '/export', ip: IP });
    limiter.hold(stream);
    const text = await observer.metrics();
    expect(sample(text, 'sluice_connections_held{rule="exports"}')).toBe(1);
    expect(sample(text, 'sluice_concurrency_active{rule="exports"}')).toBe(2);
    await limiter.release(stream);
    await limiter.release(request);
    expect(sample(await observer.metrics(), 'sluice_connections_held{rule="exports"}')).toBe(0);
    await limiter.close();
  });

  test('overdue reviews are judged at scrape time', async () => {
    let now = Date.UTC(2026, 0, 1);
    const observer = prometheusObserver({ clock: () => now });
    createLimiter({ rules: rulesV1, observer });
    let text = await observer.metrics();
    expect(sample(text, 'sluice_rule_review_overdue{rule="per_key"}')).toBe(0);
    expect(sample(text, 'sluice_rule_review_overdue{rule="exports"}')).toBeUndefined();
    now = Date.UTC(2026, 3, 1);
    text = await observer.metrics();
    expect(sample(text, 'sluice_rule_review_overdue{rule="per_key"}')).toBe(1);
    expect(sample(text, 'sluice_rule_review_overdue{rule="per_ip"}')).toBe(0);
  });

  test('a fresh registry by default, never the global one; a given registry and prefix are used', async () => {
    const a = prometheusObserver();
    const b = prometheusObserver();
    expect(a.register).not.toBe(b.register);
    expect(a.register).not.toBe(globalRegister);
    expect(await globalRegister.metrics()).not.toContain('sluice_');

    const register = new Registry();
    const custom = prometheusObserver({ register, prefix: 'gw_' });
    expect(custom.register).toBe(register);
    const names = (await register.getMetricsAsJSON()).map((m) => m.name).sort();
    expect(names).toEqual(metricNames('gw_').sort());
    expect(names).toHaveLength(23);
  });
});

describe('bans', () => {
  test('bans_total counts each ban once, when it starts, by rule; never the key', async () => {
    const observer = prometheusObserver();
    const rules = compileRules({
      rules: [
        {
          name: 'login',
          key: ['ip'],
          limit: { requests: 1, per: '60s' },
          ban: { after: 2, within: '60s', for: '10m' },
        },
      ],
    });
    const limiter = createLimiter({ rules, observer, clock: () => 0 });
    for (let i = 0; i < 6; i++) await limiter.check({ ip: IP });
    const text = await observer.metrics();
    expect(sample(text, 'sluice_bans_total{rule="login"}')).toBe(1);
    expect(sample(text, 'sluice_decisions_total{rule="login",mode="enforce",outcome="denied"}')).toBe(5);
    expect(text).not.toContain(IP);
  });
});

describe('regions', () => {
  test('a global rule: rounds, slices and a partition episode by region and rule; never the key', async () => {
    const observer = prometheusObserver();
    const rules = compileRules({
      rules: [
        {
          name: 'search_global',
          key: ['api_key'],
          algorithm: 'fixed_window',
          scope: 'global',
          limit: { requests: 1000, per: '60s' },
        },
      ],
    });
    const shared = new MemoryStore();
    let down = false;
    // The global store, cut off on demand: its calls fail while `down`.
    const global = new Proxy(shared, {
      get(target, name, receiver) {
        if (name === 'evaluate')
          return (...args: Parameters<Store['evaluate']>) =>
            down ? Promise.reject(new Error('link down')) : Promise.resolve(target.evaluate(...args));
        if (name === 'evaluateNow') return undefined;
        return Reflect.get(target, name, receiver);
      },
    });
    const limiter = createLimiter({
      rules,
      observer,
      store: new MemoryStore(),
      regions: { region: 'eu', global, syncMs: 20 },
      logger: { warn: () => {} },
    });
    try {
      const run = async (until: (text: string) => boolean) => {
        for (let i = 0; i < 200; i++) {
          await limiter.check({ api_key: API_KEY });
          await new Promise((resolve) => setTimeout(resolve, 10));
          if (until(await observer.metrics())) return;
        }
        throw new Error('the metrics never showed it');
      };
      await run(
        (text) =>
          (sample(text, 'sluice_region_units_total{region="eu",rule="search_global",kind="slice"}') ?? 0) > 0,
      );
      const linked = await observer.metrics();
      expect(sample(linked, 'sluice_region_round_seconds_count{region="eu",result="ok"}')).toBeGreaterThan(0);
      down = true;
      await run((text) => sample(text, 'sluice_region_partitioned{region="eu"}') === 1);
      expect(
        sample(await observer.metrics(), 'sluice_region_round_seconds_count{region="eu",result="error"}'),
      ).toBeGreaterThan(0);
      down = false;
      await run((text) => sample(text, 'sluice_region_partitioned{region="eu"}') === 0);
      const text = await observer.metrics();
      expect(text).not.toContain(API_KEY);
      expect(text).not.toContain(hashText(API_KEY));
    } finally {
      await limiter.close();
    }
  });
});

describe('store health metrics', () => {
  const perKey = compileRules({
    rules: [{ name: 'per_key', key: ['api_key'], limit: { requests: 1, per: '60s' } }],
  });

  test('a MemoryStore: keys and evictions, read at scrape time; always connected with the breaker closed', async () => {
    const store = new MemoryStore({ maxKeys: 3 });
    const observer = prometheusObserver({ stores: { memory: store } });
    const limiter = createLimiter({ rules: perKey, store, observer, clock: () => 0 });
    for (let i = 0; i < 5; i++) await limiter.check({ api_key: `${API_KEY}-${i}` });
    let text = await observer.metrics();
    expect(sample(text, 'sluice_store_keys{store="memory"}')).toBe(3);
    expect(sample(text, 'sluice_store_evictions_total{store="memory"}')).toBe(2);
    expect(sample(text, 'sluice_store_connected{store="memory"}')).toBe(1);
    expect(sample(text, 'sluice_store_breaker_state{store="memory",state="closed"}')).toBe(1);
    expect(sample(text, 'sluice_store_breaker_state{store="memory",state="open"}')).toBe(0);
    expect(sample(text, 'sluice_store_breaker_state{store="memory",state="half_open"}')).toBe(0);
    expect(sample(text, 'sluice_store_pending_calls{store="memory"}')).toBe(0);
    expect(sample(text, 'sluice_store_failing_open_since_seconds{store="memory"}')).toBe(0);
    expect(text).not.toContain(API_KEY);
    expect(text).not.toContain(hashText(`${API_KEY}-0`));

    // No observer call in between: the next scrape reads the store again.
    for (let i = 5; i < 9; i++) await store.evaluate([checkOf(`k${i}`)], 0);
    text = await observer.metrics();
    expect(sample(text, 'sluice_store_keys{store="memory"}')).toBe(3);
    expect(sample(text, 'sluice_store_evictions_total{store="memory"}')).toBe(6);
    await store.close();
    text = await observer.metrics();
    expect(sample(text, 'sluice_store_keys{store="memory"}')).toBe(0);
  });

  test('several stores by name; a store whose health() throws reads as unreachable; bad stores are refused', async () => {
    const broken = new MemoryStore();
    broken.health = () => {
      throw new Error('health failed');
    };
    const observer = prometheusObserver({ stores: { a: new MemoryStore(), b: broken } });
    const text = await observer.metrics();
    expect(sample(text, 'sluice_store_connected{store="a"}')).toBe(1);
    expect(sample(text, 'sluice_store_connected{store="b"}')).toBe(0);
    expect(sample(text, 'sluice_store_keys{store="a"}')).toBe(0);
    expect(sample(text, 'sluice_store_keys{store="b"}')).toBeUndefined();

    const noHealth: Store = { evaluate: async () => [], release: async () => {}, close: async () => {} };
    expect(() => prometheusObserver({ stores: { x: noHealth } })).toThrow(ConfigError);
    expect(() => prometheusObserver({ stores: { x: noHealth } })).toThrow(/stores\.x has no health\(\)/);
    expect(() => prometheusObserver({ stores: { '': new MemoryStore() } })).toThrow(/needs a name/);
  });

  test('a RedisStore: connected, then failing open since the outage while its redis-server is stopped', async () => {
    const server = await startRedis();
    const { redis, store } = await redisStoreOn(server.port);
    const observer = prometheusObserver({ stores: { redis: store } });
    const limiter = createLimiter({ rules: perKey, store, observer, timeoutMs: 10_000 });
    try {
      expect((await limiter.check({ api_key: API_KEY })).failedOpen).toBe(false);
      let text = await observer.metrics();
      expect(sample(text, 'sluice_store_connected{store="redis"}')).toBe(1);
      expect(sample(text, 'sluice_store_failing_open_since_seconds{store="redis"}')).toBe(0);
      expect(sample(text, 'sluice_store_keys{store="redis"}')).toBeUndefined(); // Redis counts no keys here

      const outage = Date.now();
      await server.stop();
      for (let i = 0; i < 10; i++) expect((await limiter.check({ api_key: API_KEY })).failedOpen).toBe(true);
      text = await observer.metrics();
      expect(sample(text, 'sluice_store_connected{store="redis"}')).toBe(0);
      const since = sample(text, 'sluice_store_failing_open_since_seconds{store="redis"}')!;
      expect(since * 1000).toBeGreaterThanOrEqual(outage);
      expect(since * 1000).toBeLessThanOrEqual(Date.now());
      expect(
        sample(text, 'sluice_store_errors_total{kind="error"}')! +
          (sample(text, 'sluice_store_errors_total{kind="timeout"}') ?? 0),
      ).toBeGreaterThan(0);
    } finally {
      await limiter.close();
      redis.disconnect();
      await server.stop();
    }
  }, 60_000);
});

describe('observer failures', () => {
  const perKey = compileRules({
    rules: [{ name: 'per_key', key: ['api_key'], limit: { requests: 10, per: '60s' } }],
  });
  const throwing = {
    onDecision(): void {
      throw new Error('log sink down');
    },
  };

  test('counts the failed hooks of each watched limiter, read at scrape time', async () => {
    const observer = prometheusObserver();
    // The limiter is made with the observer, so it is watched after it is made.
    const api = createLimiter({ rules: perKey, observer: combineObservers<Observer>(observer, throwing) });
    observer.watch('api', api);
    const admin = createLimiter({ rules: perKey, observer: throwing });
    const byOption = prometheusObserver({ limiters: { admin } });
    await admin.check({ api_key: API_KEY });
    let text = await observer.metrics();
    expect(sample(text, 'sluice_observer_failures_total{limiter="api"}')).toBe(0);

    for (let i = 0; i < 3; i++) await api.check({ api_key: API_KEY });
    text = await observer.metrics();
    expect(sample(text, 'sluice_observer_failures_total{limiter="api"}')).toBe(3);
    // The other hooks of the combined observer still ran: the decisions were counted.
    expect(sample(text, 'sluice_decisions_total{rule="per_key",mode="enforce",outcome="allowed"}')).toBe(3);
    expect(text).not.toContain(API_KEY);
    expect(sample(await byOption.metrics(), 'sluice_observer_failures_total{limiter="admin"}')).toBe(1);
  });

  test('refuses a limiter without health() or without a name', () => {
    const observer = prometheusObserver();
    expect(() => observer.watch('x', {} as never)).toThrow(ConfigError);
    expect(() => observer.watch('x', {} as never)).toThrow(/limiters\.x has no health\(\)/);
    expect(() => prometheusObserver({ limiters: { '': createLimiter({ rules: perKey }) } })).toThrow(
      /needs a name/,
    );
  });
});

/** A RedisStore on a private server, its client quiet about the connection errors the test causes. */
async function redisStoreOn(port: number): Promise<{ redis: Redis; store: RedisStore }> {
  const redis = new Redis({ ...recommendedRedisOptions, host: '127.0.0.1', port });
  redis.on('error', () => {});
  await ready(redis);
  return { redis, store: new RedisStore({ client: redis, prefix: randomPrefix('prom'), timeoutMs: 200 }) };
}

function checkOf(tag: string) {
  return {
    rule: 'r',
    tag,
    algorithm: 'fixed_window',
    params: { limit: 1, windowMs: 60_000, burst: 1 },
    cost: 1,
    mode: 'enforce',
  } as const;
}

describe('options', () => {
  test('a misspelled option is refused with a did-you-mean, not run on the default', () => {
    const attempt = () => prometheusObserver({ registry: new Registry() } as never);
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow('prometheusObserver: unknown option "registry" (did you mean "register"?)');
    expect(() => prometheusObserver({ prefx: 'x_' } as never)).toThrow('did you mean "prefix"?');
  });
});
