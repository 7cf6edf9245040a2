import { describe, expect, it } from 'vitest';
import { compileRules } from '../rules/index.js';
import { TagCache, tagFor } from './tags.js';

const [perIp, perPair, everyone, otherPerIp] = compileRules({
  rules: [
    { name: 'per_ip', key: ['ip'], limit: { requests: 1, per: '1m' } },
    { name: 'per_pair', key: ['tenant', 'api_key'], limit: { requests: 1, per: '1m' } },
    { name: 'everyone', global: true, key: [], limit: { requests: 1, per: '1m' } },
    { name: 'other_per_ip', key: ['ip'], limit: { requests: 5, per: '1m' } },
  ],
}).rules;

describe('TagCache', () => {
  it('gives the tags tagFor makes, for one key, several keys and global rules, keyed or not', () => {
    const descriptors = { ip: '203.0.113.7', tenant: 'acme', api_key: 'k1' };
    for (const secret of [undefined, 'sekret']) {
      const cache = new TagCache(secret);
      for (const rule of [perIp!, perPair!, everyone!]) {
        const expected = tagFor(rule, descriptors, secret);
        expect(expected).toMatch(/^[A-Za-z0-9_-]{22}$/);
        expect(cache.tagFor(rule, descriptors)).toBe(expected);
        expect(cache.tagFor(rule, descriptors)).toBe(expected); // from the cache
      }
    }
  });

  it('shares the tag of rules keyed on the same descriptors, and keeps different values apart', () => {
    const cache = new TagCache(undefined);
    expect(cache.tagFor(otherPerIp!, { ip: '10.0.0.1' })).toBe(cache.tagFor(perIp!, { ip: '10.0.0.1' }));
    expect(cache.tagFor(perIp!, { ip: '10.0.0.2' })).not.toBe(cache.tagFor(perIp!, { ip: '10.0.0.1' }));
    // Values that would join alike stay apart: ['a:b', 'c'] vs ['a', 'b:c'].
    expect(cache.tagFor(perPair!, { tenant: 'a:b', api_key: 'c' })).not.toBe(
      cache.tagFor(perPair!, { tenant: 'a', api_key: 'b:c' }),
    );
  });

  it('has no tag when a key descriptor is missing', () => {
    const cache = new TagCache(undefined);
    expect(cache.tagFor(perIp!, {})).toBeUndefined();
    expect(cache.tagFor(perPair!, { tenant: 'acme' })).toBeUndefined();
  });

  it('stays within its bound and still answers right after evicting', () => {
    const cache = new TagCache(undefined, 3);
    for (let i = 0; i < 10; i++) cache.tagFor(perIp!, { ip: `10.0.0.${i}` });
    expect(cache.size).toBeLessThanOrEqual(3);
    expect(cache.tagFor(perIp!, { ip: '10.0.0.0' })).toBe(tagFor(perIp!, { ip: '10.0.0.0' }));
  });

  it('stays within its bound under a flood of fresh keys, and a busy key is still right after it', () => {
    const cache = new TagCache('sekret', 1000);
    const busy = { ip: '198.51.100.1' };
    for (let i = 0; i < 20_000; i++) {
      cache.tagFor(perIp!, { ip: `flood-${i}` });
      if (i % 100 === 0) expect(cache.tagFor(perIp!, busy)).toBe(tagFor(perIp!, busy, 'sekret'));
      expect(cache.size).toBeLessThanOrEqual(1000);
    }
    expect(cache.size).toBeGreaterThan(500); // two generations: at least the young one is full
    expect(cache.tagFor(perIp!, { ip: 'flood-19999' })).toBe(tagFor(perIp!, { ip: 'flood-19999' }, 'sekret'));
  });

  it('hands back the same entry for a cached tag, so a store hint written in it is there next time', () => {
    const cache = new TagCache(undefined);
    const entry = cache.cachedTagFor(perIp!, { ip: '10.0.0.1' })!;
    expect(entry.slot).toBe(-1);
    entry.slot = 42;
    expect(cache.cachedTagFor(otherPerIp!, { ip: '10.0.0.1' })).toBe(entry);
    expect(cache.cachedTagFor(everyone!, {})).toBe(cache.cachedTagFor(everyone!, {}));
  });
});
