import { describe, expect, it } from 'vitest';
import { counterKey, isKeyPrefix } from './keys.js';

describe('store keys', () => {
  it("names a counter's keys with its tag as the Cluster hash tag", () => {
    expect(counterKey('sluice', { rule: 'per_ip', tag: 'abc_-1' }, 'w')).toBe('sluice:{abc_-1}:per_ip:w');
    expect(counterKey('api-eu', { rule: 'r', tag: 't' }, '*')).toBe('api-eu:{t}:r:*');
  });

  it('refuses a prefix with braces or whitespace, empty, or over 64 characters', () => {
    expect(isKeyPrefix('sluice')).toBe(true);
    expect(isKeyPrefix('x'.repeat(64))).toBe(true);
    for (const bad of ['', 'a{b', 'a}b', 'a b', 'a\tb', 'x'.repeat(65)]) expect(isKeyPrefix(bad)).toBe(false);
  });
});
