import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from './retryAfter.js';

const NOW = Date.UTC(2026, 10, 30, 12, 0, 0);

describe('parseRetryAfter', () => {
  it('reads delta-seconds', () => {
    expect(parseRetryAfter('0', NOW)).toBe(0);
    expect(parseRetryAfter(' 120 ', NOW)).toBe(120_000);
  });

  it('reads an HTTP date as the time left until it', () => {
    expect(parseRetryAfter('Mon, 30 Nov 2026 12:00:07 GMT', NOW)).toBe(7000);
    expect(parseRetryAfter('Monday, 30-Nov-26 12:00:03 GMT', NOW)).toBe(3000);
  });

  it('makes a date in the past no wait', () => {
    expect(parseRetryAfter('Mon, 30 Nov 2026 11:59:00 GMT', NOW)).toBe(0);
  });

  it('ignores missing and unreadable values', () => {
    for (const value of [null, undefined, '', '-1', '1.5', 'soon', '1e3']) {
      expect(parseRetryAfter(value, NOW)).toBeUndefined();
    }
  });
});
