import { describe, expect, test } from 'vitest';
import { createLimiter } from '../engine/engine.js';
import { compileRules } from '../rules/compile.js';
import type { Store } from '../store/contract.js';
import { hashText, tagFor } from '../store/tags.js';
import { combineObservers } from './combine.js';
import type { Observer } from './contract.js';
import { type DecisionLogEntry, decisionLogObserver } from './decisionLog.js';

const API_KEY = 'sk_live_VERYSECRET_4242';
const IP = '203.0.113.77';

const rules = compileRules({
  domain: 'logs',
  rules: [
    {
      name: 'per_key',
      key: ['api_key'],
      limit: { requests: 2, per: '60s' },
      owner: 'a',
      review: '2020-01-01',
    },
    { name: 'per_ip_shadow', key: ['ip'], limit: { requests: 1, per: '60s' }, mode: 'shadow', owner: 'b' },
  ],
});

function capture() {
  const lines: { level: 'info' | 'warn'; entry: Record<string, unknown> }[] = [];
  return {
    lines,
    logger: {
      info: (entry: object) => lines.push({ level: 'info', entry: entry as Record<string, unknown> }),
      warn: (entry: object) => lines.push({ level: 'warn', entry: entry as Record<string, unknown> }),
    },
    decisions: () =>
      lines
        .filter((l) => l.entry.event === 'sluice.decision')
        .map((l) => l.entry as unknown as DecisionLogEntry),
  };
}

describe('decisionLogObserver', () => {
  test('logs denials and shadow denials with hashed values, never the key or IP in clear', async () => {
    const log = capture();
    const observer = decisionLogObserver({
      logger: log.logger,
      clock: () => Date.UTC(2026, 0, 2),
      clear: ['route'],
    });
    const limiter = createLimiter({ rules, observer, clock: () => 1_000 });
    const descriptors = { api_key: API_KEY, ip: IP, route: '/search' };
    for (let i = 0; i < 3; i++) await limiter.check(descriptors);

    const entries = log.decisions();
    // Request 1 allowed (sampled at 0), 2 shadow-denied by the IP rule, 3 denied by the key rule.
    expect(entries.map((e) => e.outcome)).toEqual(['shadow_denied', 'denied']);
    const [shadow, denied] = entries as [DecisionLogEntry, DecisionLogEntry];
    expect(denied).toMatchObject({
      rule: 'per_key',
      mode: 'enforce',
      remaining: 0,
      retryAfterMs: expect.any(Number),
      version: rules.version,
      domain: 'logs',
      sample: 1,
      ts: Date.UTC(2026, 0, 2),
    });
    expect(denied.descriptors).toEqual({ api_key: hashText(API_KEY), ip: hashText(IP), route: '/search' });
    const ipRule = rules.rules.find((r) => r.name === 'per_ip_shadow')!;
    expect(shadow.results).toContainEqual(
      expect.objectContaining({
        rule: 'per_ip_shadow',
        outcome: 'shadow_denied',
        key: tagFor(ipRule, descriptors),
      }),
    );
    expect(log.lines.find((l) => l.entry === (denied as object))?.level).toBe('warn');
    const text = JSON.stringify(log.lines);
    expect(text).not.toContain(API_KEY);
    expect(text).not.toContain(IP);
  });

  test('each outcome has its own sampling rate', async () => {
    const log = capture();
    const draws = [0.2, 0.9, 0.2, 0.9];
    const observer = decisionLogObserver({
      logger: log.logger,
      sample: { allowed: 0.5, denied: 0, shadowDenied: 1 },
      random: () => draws.shift() ?? 0,
    });
    const limiter = createLimiter({ rules, observer, clock: () => 0 });
    await limiter.check({ api_key: 'a' }); // allowed, draw 0.2 < 0.5: logged
    await limiter.check({ api_key: 'b' }); // allowed, draw 0.9: dropped
    await limiter.check({ api_key: 'a' }); // allowed, 0.2: logged
    await limiter.check({ api_key: 'a' }); // denied at rate 0: never logged, no draw
    await limiter.check({ ip: 'x' });
    await limiter.check({ ip: 'x' }); // shadow denied at rate 1
    expect(log.decisions().map((e) => [e.outcome, e.sample])).toEqual([
      ['allowed', 0.5],
      ['allowed', 0.5],
      ['shadow_denied', 1],
    ]);
    expect(() => decisionLogObserver({ logger: log.logger, sample: { denied: 2 } })).toThrow(RangeError);
  });

  test('warns about overdue reviews at load, rejected rules and store errors (throttled)', async () => {
    const log = capture();
    let now = Date.UTC(2026, 5, 1);
    const observer = decisionLogObserver({
      logger: log.logger,
      clock: () => now,
      storeErrorIntervalMs: 1000,
    });
    const failing: Store = {
      evaluate: () => Promise.reject(new Error('connection refused')),
      release: async () => {},
      close: async () => {},
    };
    const limiter = createLimiter({ rules, observer, store: failing, clock: () => now });
    expect(log.lines.find((l) => l.entry.event === 'sluice.review_overdue')?.entry).toMatchObject({
      rules: [{ rule: 'per_key', review: '2020-01-01', owner: 'a' }],
    });
    for (let i = 0; i < 3; i++) await limiter.check({ api_key: API_KEY });
    now += 1000;
    await limiter.check({ api_key: API_KEY });
    const errors = log.lines.filter((l) => l.entry.event === 'sluice.store_error').map((l) => l.entry);
    expect(errors).toMatchObject([
      { kind: 'error', suppressed: 0 },
      { kind: 'error', suppressed: 2 },
    ]);
    expect(log.decisions().filter((e) => e.outcome === 'failed_open')).toHaveLength(4);
    observer.onRulesError?.(new Error('rules.yaml:3:5 bad'));
    expect(log.lines.at(-1)).toMatchObject({ level: 'warn', entry: { error: 'rules.yaml:3:5 bad' } });
  });
});

describe('combineObservers', () => {
  test('calls every observer, even after one throws', async () => {
    const seen: string[] = [];
    const broken: Observer = {
      onDecision: () => {
        throw new Error('observer bug');
      },
    };
    const counting: Observer = {
      onDecision: (d) => seen.push(`decision ${d.allowed}`),
      onRulesLoaded: (r) => seen.push(`rules ${r.domain}`),
    };
    const limiter = createLimiter({ rules, observer: combineObservers(broken, undefined, counting) });
    await limiter.check({ api_key: 'k' });
    expect(seen).toEqual(['rules logs', 'decision true']);
    expect(Object.keys(combineObservers(counting)).sort()).toEqual(['onDecision', 'onRulesLoaded']);
    // Hooks beyond Observer's (an adapter's) pass through too.
    const adapterErrors: string[] = [];
    const adapter = { onAdapterError: (error: Error) => adapterErrors.push(error.message) };
    combineObservers<Observer & typeof adapter>(adapter).onAdapterError(new Error('descriptors threw'));
    expect(adapterErrors).toEqual(['descriptors threw']);
  });

  test('passes a failure on once every observer has heard, so the limiter counts it', async () => {
    const seen: string[] = [];
    const limiter = createLimiter({
      rules,
      observer: combineObservers<Observer>(
        {
          async onDecision() {
            throw new Error('async observer bug');
          },
        },
        {
          onDecision() {
            throw new Error('sync observer bug');
          },
        },
        { onDecision: (d) => void seen.push(`decision ${d.allowed}`) },
      ),
    });
    await limiter.check({ api_key: 'k' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen).toEqual(['decision true']);
    expect(limiter.health().observerFailures).toBe(1);
    const sync = combineObservers<Observer>({
      onLeases() {
        throw new Error('first');
      },
    });
    expect(() => sync.onLeases?.('r', 1)).toThrow('first');
  });
});
