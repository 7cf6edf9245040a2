import { describe, expect, it } from 'vitest';
import { expiryMs } from '../rules/dates.js';
import { parseDuration } from './duration.js';
import { ConfigError } from './errors.js';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['1s', 1_000],
    ['60s', 60_000],
    ['1m', 60_000],
    ['1h', 3_600_000],
    ['1d', 86_400_000],
    ['0s', 0],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it('suggests seconds for a bare number, which is most likely what was meant', () => {
    expect(() => parseDuration('60')).toThrow('"60" is not a duration (did you mean "60s"?)');
  });

  it.each(['60x', '60', '1.5s', '-1s', ' 1s', '1 s', 's', '', '1S', '1w', 'day', '99999999999999999d'])(
    'rejects %j',
    (text) => {
      expect(() => parseDuration(text)).toThrow(ConfigError);
      expect(() => parseDuration(text)).toThrow(`${JSON.stringify(text)} is not a duration`);
    },
  );
});

describe('expires', () => {
  it('a date means the end of that UTC day', () => {
    expect(expiryMs('2027-01-15')).toBe(Date.UTC(2027, 0, 16));
  });

  it('a datetime is that instant and must carry an offset', () => {
    expect(expiryMs('2027-01-15T12:30:00Z')).toBe(Date.UTC(2027, 0, 15, 12, 30));
    expect(expiryMs('2027-01-15T12:30:00+02:00')).toBe(Date.UTC(2027, 0, 15, 10, 30));
    expect(expiryMs('2027-01-15T12:30:00')).toBeUndefined();
    expect(expiryMs('2027-02-30T12:30:00Z')).toBeUndefined();
    expect(expiryMs('2027-1-15')).toBeUndefined();
  });
});
