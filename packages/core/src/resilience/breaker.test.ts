import { describe, expect, it } from 'vitest';
import { Breaker } from './breaker.js';

describe('Breaker', () => {
  it('stays closed until `failures` failures in a row; a success resets the count', () => {
    const breaker = new Breaker({ failures: 3, cooldownMs: 100 });
    breaker.failed(0);
    breaker.failed(0);
    breaker.succeeded();
    breaker.failed(0);
    breaker.failed(0);
    expect(breaker.admit(1)).toBe(true);
    breaker.failed(1);
    expect(breaker.open).toBe(true);
    expect(breaker.admit(2)).toBe(false);
  });

  it('admits one probe after the cool-down; its success closes, its failure reopens', () => {
    const breaker = new Breaker({ failures: 1, cooldownMs: 100 });
    breaker.failed(0);
    expect(breaker.admit(99)).toBe(false);
    expect(breaker.admit(100)).toBe(true);
    expect(breaker.admit(100)).toBe(false); // one probe at a time
    breaker.failed(100);
    expect(breaker.admit(150)).toBe(false);
    expect(breaker.admit(200)).toBe(true);
    breaker.succeeded();
    expect(breaker.open).toBe(false);
    expect(breaker.admit(201)).toBe(true);
    expect(breaker.admit(201)).toBe(true);
  });

  it('does not stay open for the size of a backwards clock step', () => {
    const breaker = new Breaker({ failures: 1, cooldownMs: 100 });
    breaker.failed(1_000_000);
    expect(breaker.admit(1_000_050)).toBe(false);
    expect(breaker.admit(10)).toBe(true);
  });

  it('probeNow: a connection back up lets the next call probe before the cool-down ends', () => {
    const breaker = new Breaker({ failures: 1, cooldownMs: 1000 });
    breaker.failed(100);
    expect(breaker.admit(200)).toBe(false);
    breaker.probeNow();
    expect(breaker.admit(201)).toBe(true);
    expect(breaker.admit(202)).toBe(false); // one probe at a time
    breaker.succeeded();
    expect(breaker.open).toBe(false);
  });
});
