import { describe, expect, it } from 'vitest';
import { readRateLimits } from './rateLimitFields.js';
import { parseList } from './structuredFields.js';

const NOW = Date.UTC(2026, 10, 30, 12, 0, 0);
const read = (fields: Record<string, string>) => readRateLimits(new Headers(fields), NOW);

describe('readRateLimits', () => {
  it('reads the fields Sluice sends', () => {
    expect(read({ 'RateLimit-Policy': '"per_ip";q=100;w=60', RateLimit: '"per_ip";r=42;t=17' })).toEqual([
      { policy: 'per_ip', remaining: 42, resetMs: 17_000, limit: 100, windowMs: 60_000 },
    ]);
  });

  it('reads several policies, and names with escaped quotes', () => {
    const infos = read({
      'RateLimit-Policy': '"a\\"b";q=10;w=1, burst;q=5',
      RateLimit: '"a\\"b";r=0;t=1, burst;r=4;t=2',
    });
    expect(infos).toEqual([
      { policy: 'a"b', remaining: 0, resetMs: 1000, limit: 10, windowMs: 1000 },
      { policy: 'burst', remaining: 4, resetMs: 2000, limit: 5 },
    ]);
  });

  it('takes the window of the policy when the reset is missing, and skips items it cannot place', () => {
    expect(read({ 'RateLimit-Policy': '"d";q=9;w=30', RateLimit: '"d";r=3, "x";r=1, "y";t=4' })).toEqual([
      { policy: 'd', remaining: 3, resetMs: 30_000, limit: 9, windowMs: 30_000 },
    ]);
  });

  it("reads the older draft's dictionary form and its separate fields", () => {
    expect(read({ RateLimit: 'limit=100, remaining=5, reset=30' })).toEqual([
      { policy: '', remaining: 5, resetMs: 30_000, limit: 100 },
    ]);
    expect(
      read({
        'RateLimit-Limit': '10',
        'RateLimit-Remaining': '2',
        'RateLimit-Reset': '3',
        'RateLimit-Policy': '10;w=6',
      }),
    ).toEqual([{ policy: '', remaining: 2, resetMs: 3000, limit: 10, windowMs: 6000 }]);
  });

  it('reads legacy X-RateLimit fields, with a reset in seconds, epoch seconds or epoch ms', () => {
    const legacy = (reset: string) =>
      read({ 'X-RateLimit-Limit': '60', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': reset });
    expect(legacy('12')).toEqual([{ policy: '', remaining: 0, resetMs: 12_000, limit: 60 }]);
    expect(legacy(String(NOW / 1000 + 5))).toEqual([{ policy: '', remaining: 0, resetMs: 5000, limit: 60 }]);
    expect(legacy(String(NOW + 2500))).toEqual([{ policy: '', remaining: 0, resetMs: 2500, limit: 60 }]);
  });

  it('answers nothing for absent or malformed fields', () => {
    expect(read({})).toEqual([]);
    expect(read({ RateLimit: '"unterminated;r=1;t=2' })).toEqual([]);
    expect(read({ RateLimit: '"p";r=-1;t=2' })).toEqual([]);
    expect(read({ 'X-RateLimit-Remaining': 'many', 'X-RateLimit-Reset': '1' })).toEqual([]);
  });
});

describe('parseList', () => {
  it('reads items with parameters of every bare type', () => {
    const items = parseList('"s";a=1;b=2.5;c;d=?0;e=tok, 7;w=1');
    expect(items?.map((item) => [item.value, item.quoted, Object.fromEntries(item.params)])).toEqual([
      ['s', true, { a: 1, b: 2.5, c: true, d: false, e: 'tok' }],
      [7, false, { w: 1 }],
    ]);
  });

  it('rejects malformed lists', () => {
    for (const text of ['"a", ', '"a" "b"', '"a";=1', '"a\\x"', '?2', '(inner)']) {
      expect(parseList(text)).toBeUndefined();
    }
  });
});
