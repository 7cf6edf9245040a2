import type { Decision, Descriptors } from '@sluice/core';
import { describe, expect, test } from 'vitest';
import type { ReplayRequest } from '../replay/request.js';
import { BURST_FACTOR, HOT_SHARE, type PatternName, patternOf } from './patterns.js';
import { seededRandom } from './random.js';
import { runTraffic } from './traffic.js';

const MINUTE = 60_000;
const settings = { rps: 20, keys: 50, durationMs: 10 * MINUTE };
const ALLOWED = { allowed: true } as Decision;
const DENIED = { allowed: false } as Decision;

/** Runs a pattern, recording every request, with `decide` choosing the answer. */
function run(name: PatternName, decide: (r: ReplayRequest) => Decision = () => ALLOWED, seed = 7) {
  const seen: { time: number; client: number }[] = [];
  const counts = runTraffic(
    patternOf(name, settings),
    { start: 0, durationMs: settings.durationMs, random: seededRandom(seed) },
    (client): Descriptors => ({ client: String(client) }),
    (request) => {
      seen.push({ time: request.time, client: Number(request.descriptors.client) });
      return decide(request);
    },
  );
  return { counts, seen };
}

const inRange = (seen: readonly { time: number }[], from: number, to: number) =>
  seen.filter((r) => r.time >= from && r.time < to).length;

describe('traffic patterns', () => {
  test('steady: about rps x duration, in time order, clients uniform', () => {
    const { counts, seen } = run('steady');
    expect(counts.requests).toBeGreaterThan(12_000 * 0.95);
    expect(counts.requests).toBeLessThan(12_000 * 1.05);
    expect(seen.every((r, i) => i === 0 || r.time >= (seen[i - 1]?.time ?? 0))).toBe(true);
    expect(new Set(seen.map((r) => r.client)).size).toBe(settings.keys);
  });

  test('burst: the middle tenth carries 10x the rate', () => {
    const { seen } = run('burst');
    const middle = inRange(seen, 4.5 * MINUTE, 5.5 * MINUTE);
    const before = inRange(seen, 0, MINUTE);
    expect(middle / before).toBeGreaterThan(BURST_FACTOR * 0.8);
    expect(middle / before).toBeLessThan(BURST_FACTOR * 1.2);
  });

  test('ramp: the last minute carries many times the first', () => {
    const { seen } = run('ramp');
    expect(inRange(seen, 9 * MINUTE, 10 * MINUTE) / inRange(seen, 0, MINUTE)).toBeGreaterThan(10);
  });

  test('many-keys: every request from a new client; hot-key: half from one client', () => {
    const many = run('many-keys').seen;
    expect(new Set(many.map((r) => r.client)).size).toBe(many.length);
    const hot = run('hot-key').seen;
    const share = hot.filter((r) => r.client === 0).length / hot.length;
    expect(share).toBeGreaterThan(HOT_SHARE - 0.03);
    expect(share).toBeLessThan(HOT_SHARE + 0.03);
  });

  test('retry-storm: a denied request comes back 100-500 ms later, at most 10 times; allowed ones do not', () => {
    const { counts, seen } = run('retry-storm', () => DENIED);
    expect(counts.retries).toBe(counts.requests * 10);
    expect(counts.gaveUp).toBe(counts.requests);
    const first = seen[0];
    const again = seen.filter((r) => r.client === first?.client).map((r) => r.time);
    const gaps = again.slice(1, 11).map((t, i) => t - (again[i] ?? 0));
    // The client's own next new request may fall between its retries; the first retry is what counts.
    expect(gaps[0]).toBeGreaterThanOrEqual(99);
    expect(gaps[0]).toBeLessThanOrEqual(500);
    expect(run('retry-storm').counts.retries).toBe(0);
  });

  test('the same seed gives the same traffic; another seed does not', () => {
    expect(run('burst', undefined, 3).seen).toEqual(run('burst', undefined, 3).seen);
    expect(run('burst', undefined, 4).seen).not.toEqual(run('burst', undefined, 3).seen);
  });
});
