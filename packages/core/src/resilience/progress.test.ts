import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_STALL_CAP_MS, DEFAULT_STALL_MS, Progress } from './progress.js';

/** A Progress on virtual time (performance.now and timers faked), with the moments it declared a stall. */
function watched(stallMs = DEFAULT_STALL_MS, capMs = DEFAULT_STALL_CAP_MS) {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'performance'] });
  const stalls: number[] = [];
  const progress = new Progress(stallMs, () => stalls.push(performance.now()), capMs);
  return { progress, stalls };
}

/** One call sent now and answered after `ms`. */
async function answeredAfter(progress: Progress, ms: number) {
  progress.waiting();
  await vi.advanceTimersByTimeAsync(ms);
  progress.settled(true);
}

/** A call sent now that is never answered: how long until the stall was declared, ms (whole). */
async function hangCost(progress: Progress, stalls: number[]): Promise<number> {
  const hungAt = performance.now();
  progress.waiting();
  await vi.advanceTimersByTimeAsync(1000);
  return Math.floor(stalls[0]! - hungAt);
}

afterEach(() => {
  vi.useRealTimers();
});

describe('Progress: busy or hung, by the store pace', () => {
  it('a store that answered briskly and then nothing: its calls are given up after stallMs', async () => {
    const { progress, stalls } = watched();
    for (let i = 0; i < 20; i++) await answeredAfter(progress, 2);
    expect(await hangCost(progress, stalls)).toBe(DEFAULT_STALL_MS + 1); // and one more turn for the socket
  });

  it('a store answering every 150 ms keeps its calls past 200 ms gaps, up to the cap; a hang then costs the cap', async () => {
    const { progress, stalls } = watched();
    for (let i = 0; i < 5; i++) await answeredAfter(progress, 150);
    expect(progress.allowanceMs()).toBe(DEFAULT_STALL_CAP_MS);
    // A loaded machine stretches one gap to 260 ms: still answered, not given up.
    await answeredAfter(progress, 260);
    expect(stalls).toEqual([]);
    expect(await hangCost(progress, stalls)).toBe(DEFAULT_STALL_CAP_MS + 1);
  });

  it('the pace fades: 10 s after a busy spell, a hang is told within stallMs again', async () => {
    const { progress } = watched();
    await answeredAfter(progress, 150);
    expect(progress.allowanceMs()).toBe(DEFAULT_STALL_CAP_MS);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(progress.allowanceMs()).toBe(DEFAULT_STALL_MS); // 150 / 4 * 2 = 75 < 200
  });

  it('a late answer to calls given up shows a busy store: the next gap that long is waited for', async () => {
    const { progress, stalls } = watched(100, 400);
    progress.waiting();
    await vi.advanceTimersByTimeAsync(105);
    expect(stalls).toHaveLength(1); // given up at 100 ms
    progress.settled(false);
    await vi.advanceTimersByTimeAsync(45);
    progress.answered(); // the store was only busy: it answered 150 ms after the gap began
    expect(progress.allowanceMs()).toBe(300);
    await answeredAfter(progress, 250);
    expect(stalls).toHaveLength(1);
  });
});
