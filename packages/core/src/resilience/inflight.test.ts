import { describe, expect, it, vi } from 'vitest';
import { StoreError } from '../base/errors.js';
import { InFlight } from './inflight.js';
import { TimeLimit } from './timeLimit.js';

/** A promise settled from outside, standing for a command ioredis holds (or drops). */
function command<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** An InFlight whose freed slots are summed, so that a double free shows. */
function tracker(timeoutMs: number, strandedMs: number) {
  const freed: number[] = [];
  const inFlight = new InFlight(timeoutMs, strandedMs, (count) => freed.push(count), 'Redis');
  return { inFlight, freed };
}

describe('InFlight', () => {
  it('a command never settled (dropped by the client): the caller times out once, the slots free once after strandedMs', async () => {
    const { inFlight, freed } = tracker(10, 40);
    const never = command<string>();
    const call = inFlight.track(never.promise, 3);
    await expect(call).rejects.toMatchObject({ code: 'ERR_SLUICE_STORE_TIMEOUT' });
    expect(freed).toEqual([]); // still counted: Redis may yet be running it
    await vi.waitFor(() => expect(freed).toEqual([3]), { timeout: 5000, interval: 5 });
    expect(inFlight.size).toBe(0);
    never.resolve('late'); // an answer after all changes nothing
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(freed).toEqual([3]);
  });

  it('an answer after the time limit frees the slots then, once; the caller keeps its timeout', async () => {
    const { inFlight, freed } = tracker(10, 60_000);
    const slow = command<string>();
    const call = inFlight.track(slow.promise, 2);
    await expect(call).rejects.toMatchObject({ code: 'ERR_SLUICE_STORE_TIMEOUT' });
    slow.resolve('late');
    await vi.waitFor(() => expect(freed).toEqual([2]));
    inFlight.connectionLost();
    expect(freed).toEqual([2]);
  });

  it('a lost connection fails what is in flight at once and frees it once; a later rejection by the client is ignored', async () => {
    const { inFlight, freed } = tracker(60_000, 60_000);
    const a = command<string>();
    const b = command<string>();
    const calls = [inFlight.track(a.promise, 1), inFlight.track(b.promise, 4)];
    expect(inFlight.size).toBe(2);
    inFlight.connectionLost();
    const outcomes = await Promise.allSettled(calls);
    expect(outcomes.map((o) => o.status === 'rejected' && o.reason instanceof StoreError)).toEqual([
      true,
      true,
    ]);
    expect(freed).toEqual([1, 4]);
    a.reject(new Error('Connection is closed.'));
    b.resolve('ghost');
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(freed).toEqual([1, 4]);
    expect(inFlight.size).toBe(0);
  });

  it('an answer in time resolves the caller and frees the slots; an error rejects it as a StoreError', async () => {
    const { inFlight, freed } = tracker(60_000, 60_000);
    const ok = command<string>();
    const bad = command<string>();
    const answered = inFlight.track(ok.promise, 1);
    const failed = inFlight.track(bad.promise, 1);
    ok.resolve('yes');
    bad.reject(new Error('WRONGTYPE'));
    await expect(answered).resolves.toBe('yes');
    await expect(failed).rejects.toMatchObject({
      code: 'ERR_SLUICE_STORE',
      message: 'Redis call failed: WRONGTYPE',
    });
    expect(freed).toEqual([1, 1]);
  });
});

describe('InFlight with a TimeLimit', () => {
  it('waits up to the ceiling while the store answers; after a call timed out, the floor until an answer', async () => {
    const limit = new TimeLimit(10, 300);
    const inFlight = new InFlight(limit, 2000, () => {}, 'Redis');
    // A busy store: answered after 40 ms, well past the floor, within the ceiling.
    const busy = command<string>();
    const waited = inFlight.track(busy.promise, 1);
    setTimeout(() => busy.resolve('late'), 40);
    await expect(waited).resolves.toBe('late');
    // A hung one: the first call waits the ceiling, the next ones only the floor.
    let started = performance.now();
    const hung = command<string>();
    await expect(inFlight.track(hung.promise, 1)).rejects.toMatchObject({
      message: 'Redis did not answer within 300 ms',
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(limit.suspect).toBe(true);
    started = performance.now();
    await expect(inFlight.track(command<string>().promise, 1)).rejects.toMatchObject({
      message: 'Redis did not answer within 10 ms',
    });
    expect(performance.now() - started).toBeLessThan(250);
    // Any answer, late ones too, shows the store alive: the ceiling again.
    hung.resolve('very late');
    await new Promise((resolve) => setImmediate(resolve));
    expect(limit.ms).toBe(300);
  });
});

describe('InFlight with a stall watchdog', () => {
  it('a store that answers nothing: every waiting call is given up after stallMs, not the ceiling', async () => {
    const limit = new TimeLimit(20, 2000);
    const freed: number[] = [];
    const inFlight = new InFlight(limit, 60_000, (n) => freed.push(n), 'Redis', 100);
    const started = performance.now();
    const first = inFlight.track(command<string>().promise, 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const second = inFlight.track(command<string>().promise, 2);
    const outcomes = await Promise.allSettled([first, second]);
    const waited = performance.now() - started;
    expect(outcomes.map((o) => o.status === 'rejected' && (o.reason as StoreError).message)).toEqual([
      'Redis answered nothing for 100 ms',
      'Redis answered nothing for 100 ms',
    ]);
    expect(waited).toBeGreaterThanOrEqual(95);
    expect(waited).toBeLessThan(1000);
    expect(limit.suspect).toBe(true);
    expect(freed).toEqual([]); // their slots wait for a late answer, or the backstop
    expect(inFlight.size).toBe(2);
  });

  it('a store that keeps answering: a call waits past stallMs, up to the ceiling', async () => {
    const limit = new TimeLimit(20, 2000);
    const inFlight = new InFlight(limit, 60_000, () => {}, 'Redis', 100);
    const slow = command<string>();
    const waited = inFlight.track(slow.promise, 1);
    // Other calls answered every 60 ms: the store makes progress, so the slow call is not given up.
    for (let i = 0; i < 6; i += 1) {
      const other = command<string>();
      const answered = inFlight.track(other.promise, 1);
      await new Promise((resolve) => setTimeout(resolve, 60));
      other.resolve('ok');
      await answered;
    }
    slow.resolve('late but answered');
    await expect(waited).resolves.toBe('late but answered');
    expect(limit.suspect).toBe(false);
  });

  it('a call left unwatched (waiting for a first connection) keeps its own time limit', async () => {
    const inFlight = new InFlight(new TimeLimit(20, 400), 60_000, () => {}, 'Redis', 50);
    const started = performance.now();
    await expect(inFlight.track(command<string>().promise, 1, false)).rejects.toMatchObject({
      message: 'Redis did not answer within 400 ms',
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(390);
  });

  it('a fixed limit has no watchdog', async () => {
    const inFlight = new InFlight(300, 60_000, () => {}, 'Redis', 50);
    const started = performance.now();
    await expect(inFlight.track(command<string>().promise, 1)).rejects.toMatchObject({
      message: 'Redis did not answer within 300 ms',
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
  });
});
