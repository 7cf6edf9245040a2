import { describe, expect, it } from 'vitest';
import { ConfigError } from '../base/errors.js';
import { adapterReporter, runHook, validCost } from './hooks.js';

function recorder() {
  const warnings: string[] = [];
  const seen: string[] = [];
  const report = adapterReporter(
    { warn: (message) => warnings.push(message) },
    { onAdapterError: (error, stage) => seen.push(`${stage}: ${error.message}`) },
  );
  return { report, warnings, seen };
}

describe('adapter hooks', () => {
  it('reports every failure to the observer and logs each stage once', () => {
    const { report, warnings, seen } = recorder();
    report(new Error('one'), 'skip');
    report('two', 'skip');
    report(new Error('three'), 'cost');
    expect(seen).toEqual(['skip: one', 'skip: two', 'cost: three']);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain('[SLUICE_SKIP_FAILED]');
  });

  it('keeps a synchronous hook synchronous, and reads a throw or a rejection as undefined', async () => {
    const { report, seen } = recorder();
    expect(runHook(report, 'skip', () => true)).toBe(true);
    expect(
      runHook(report, 'skip', () => {
        throw new Error('sync');
      }),
    ).toBeUndefined();
    const later = runHook(report, 'cost', () => Promise.reject(new Error('async')));
    expect(later).toBeInstanceOf(Promise);
    expect(await later).toBeUndefined();
    expect(seen).toEqual(['skip: sync', 'cost: async']);
  });

  it('passes whole costs >= 0 and reports others as a ConfigError', () => {
    const errors: unknown[] = [];
    const report = (error: unknown) => errors.push(error);
    expect(validCost(report, 3)).toBe(3);
    expect(validCost(report, undefined)).toBeUndefined();
    expect(validCost(report, 1.5)).toBeUndefined();
    expect(validCost(report, -1)).toBeUndefined();
    expect(errors).toHaveLength(2);
    expect(errors[0]).toBeInstanceOf(ConfigError);
  });
});
