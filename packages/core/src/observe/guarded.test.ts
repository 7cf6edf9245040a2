import { describe, expect, it } from 'vitest';
import { compileRules } from '../rules/compile.js';
import type { Decision, Observer } from './contract.js';
import { guardObserver } from './guarded.js';

const rules = compileRules({ rules: [{ name: 'r', key: ['ip'], limit: { requests: 1, per: '1s' } }] });
const decision = { allowed: true } as Decision;

describe('guardObserver', () => {
  it('turns missing hooks into no-ops, and says whether store latency is listened to', () => {
    const quiet = guardObserver(undefined);
    expect(() => {
      quiet.onDecision(decision, {});
      quiet.onStoreError('timeout', new Error('x'));
      quiet.onStoreLatency(0.001);
      quiet.onRulesLoaded(rules);
      quiet.onRulesError(new Error('x'));
      quiet.onLeases('r', 1);
    }).not.toThrow();
    expect(quiet.timesStore).toBe(false);
    expect(guardObserver({ onStoreLatency: () => {} }).timesStore).toBe(true);
  });

  it('passes every event on with its arguments and the observer as `this`', () => {
    const heard: unknown[][] = [];
    const observer: Observer & { name: string } = {
      name: 'metrics',
      onDecision(d, descriptors) {
        heard.push([this.name, 'decision', d, descriptors]);
      },
      onStoreError: (kind, error) => heard.push(['error', kind, error.message]),
      onLeases: (rule, delta) => heard.push(['leases', rule, delta]),
    };
    const guarded = guardObserver(observer);
    guarded.onDecision(decision, { ip: '192.0.2.1' });
    guarded.onStoreError('breaker_open', new Error('open'));
    guarded.onLeases('r', -1);
    expect(heard).toEqual([
      ['metrics', 'decision', decision, { ip: '192.0.2.1' }],
      ['error', 'breaker_open', 'open'],
      ['leases', 'r', -1],
    ]);
  });

  it('swallows a throwing hook, whichever it is', () => {
    const boom = () => {
      throw new Error('observer bug');
    };
    const guarded = guardObserver({
      onDecision: boom,
      onStoreError: boom,
      onStoreLatency: boom,
      onRulesLoaded: boom,
      onRulesError: boom,
      onLeases: boom,
    });
    expect(() => {
      guarded.onDecision(decision, {});
      guarded.onStoreError('error', new Error('x'));
      guarded.onStoreLatency(1);
      guarded.onRulesLoaded(rules);
      guarded.onRulesError(new Error('x'));
      guarded.onLeases('r', 1);
    }).not.toThrow();
  });

  it('counts a throwing hook, and an async hook that rejects, without an unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const guarded = guardObserver({
        async onDecision() {
          throw new Error('async observer bug');
        },
        onLeases: () => Promise.reject(new Error('rejected')),
        onStoreLatency() {
          throw new Error('sync observer bug');
        },
        onRulesLoaded: async () => {},
      });
      guarded.onDecision(decision, {});
      guarded.onLeases('r', 1);
      guarded.onStoreLatency(1);
      guarded.onRulesLoaded(rules);
      expect(guarded.failures).toBe(1); // the sync throw at once
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(guarded.failures).toBe(3);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
