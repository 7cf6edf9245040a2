/**
 * RedisStore coalescing under load: while a script call is out, the next turns' evaluations are held in one
 * batch that leaves at the end of the turn the call settles in, with what that turn adds (fewer, bigger
 * calls); with nothing out a request still leaves at the end of its turn; and a held request keeps the
 * store's time limit from its own turn, the hold included, against a real Redis slowed by DEBUG SLEEP.
 */
import type { Check } from '@sluice/core/store';
import { RedisStore, type RedisStoreOptions } from '@sluice/redis';
import { describe, expect, it, vi } from 'vitest';
import { randomPrefix, redisSuite, scriptCalls } from './support/redis.js';

const redis = redisSuite();
const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);

function storeFor(options: Partial<RedisStoreOptions> = {}): RedisStore {
  return new RedisStore({
    client: redis.client,
    prefix: randomPrefix('hold'),
    timeoutMs: 5000,
    breaker: false,
    logger: { warn: () => {} },
    ...options,
  });
}

function check(tag: string, limit = 100): Check {
  return {
    rule: 'held',
    tag: `${tag}AAAAAAAAAAAAAAAAAAAAAA`.slice(0, 22),
    algorithm: 'fixed_window',
    params: { limit, windowMs: 60_000, burst: limit },
    cost: 1,
    mode: 'enforce',
  };
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Blocks the server for `seconds` (DEBUG SLEEP on the admin connection); `woke` resolves when it answers. */
async function sleepRedis(seconds: number): Promise<{ woke: Promise<unknown> }> {
  const woke = redis.admin.debug('SLEEP', seconds);
  // Until the server has started sleeping: a command on another connection could otherwise go first.
  await new Promise((resolve) => setTimeout(resolve, 50));
  return { woke };
}

/** Records the commands `client` writes, in order, until the returned function is called. */
function recordCommands(order: string[]): () => void {
  const client = redis.client as unknown as { sendCommand(command: { name: string }): unknown };
  const send = client.sendCommand;
  client.sendCommand = function (this: unknown, command: { name: string }, ...rest: unknown[]) {
    order.push(command.name);
    return (send as (...args: unknown[]) => unknown).call(this, command, ...rest);
  };
  return () => {
    client.sendCommand = send;
  };
}

describe('held batches while a call is out', () => {
  it('evaluations of five later turns wait for the call in flight and leave together: two calls, not six', async () => {
    const store = storeFor();
    await store.evaluate([check('warm')], T0); // the script is loaded: one EVALSHA per call from here
    const before = await scriptCalls(redis.admin);
    await sleepRedis(0.3);
    const first = store.evaluate([check('first')], T0);
    const later: Promise<unknown>[] = [];
    for (let turn = 0; turn < 5; turn++) {
      await nextTurn();
      for (let i = 0; i < 4; i++) later.push(store.evaluate([check(`t${turn}r${i}`)], T0));
    }
    const results = await Promise.all([first, ...later]);
    expect(results).toHaveLength(21);
    expect((await scriptCalls(redis.admin)) - before).toBe(2);
    expect(store.pending).toBe(0);
  });

  it('a held batch leaves at the end of the turn its call settled in, with what that turn adds: two calls, not three', async () => {
    const store = storeFor();
    await store.evaluate([check('warm')], T0);
    const before = await scriptCalls(redis.admin);
    await sleepRedis(0.2);
    const first = store.evaluate([check('first')], T0);
    await nextTurn();
    const held = store.evaluate([check('held')], T0);
    // Asked in the turn the first call settles in, after its answer: it goes with the held batch.
    const joined = first.then(() => store.evaluate([check('joined')], T0));
    const results = await Promise.all([first, held, joined]);
    expect(results.map((r) => r[0]?.allowed)).toEqual([true, true, true]);
    expect((await scriptCalls(redis.admin)) - before).toBe(2);
    expect(store.pending).toBe(0);
  });

  it('with nothing out, a request leaves at the end of its turn; while a call is out, when it settles', async () => {
    const store = storeFor();
    await store.evaluate([check('warm')], T0);
    const order: string[] = [];
    const stop = recordCommands(order);
    try {
      const idle = store.evaluate([check('idle')], T0);
      await nextTurn(); // the coalescer's end of turn ran first (it was scheduled first)
      order.push('turn 1 ended');
      await idle;
      await sleepRedis(0.2); // keeps the next call out for the next turns
      const first = store.evaluate([check('busy1')], T0);
      await nextTurn();
      order.push('turn 2 ended');
      const held = store.evaluate([check('busy2')], T0);
      await nextTurn();
      order.push('turn 3 ended');
      await Promise.all([first, held]);
      expect(order).toEqual([
        'evalsha',
        'turn 1 ended',
        'evalsha',
        'turn 2 ended',
        'turn 3 ended',
        'evalsha',
      ]);
    } finally {
      stop();
    }
  });

  it('held requests fail open within their own time limit on a sleeping server, not twice it', async () => {
    const timeoutMs = 150;
    const store = storeFor({ timeoutMs });
    await store.evaluate([check('warm')], T0);
    const { woke } = await sleepRedis(0.8);
    const outcomes: Promise<{ elapsed: number; code: unknown }>[] = [];
    const timed = (tag: string) => {
      const start = performance.now();
      outcomes.push(
        store.evaluate([check(tag)], T0).then(
          () => ({ elapsed: performance.now() - start, code: 'answered' }),
          (error: { code?: unknown }) => ({ elapsed: performance.now() - start, code: error.code }),
        ),
      );
    };
    timed('slow0'); // the call out: it times out at timeoutMs, then the held batch leaves into the sleep
    await nextTurn();
    timed('slow1'); // held from the start: without its own timer it would fail at 2 × timeoutMs
    await new Promise((resolve) => setTimeout(resolve, 40));
    timed('slow2'); // joins the held batch later
    const settled = await Promise.all(outcomes);
    for (const { elapsed, code } of settled) {
      expect(code).toBe('ERR_SLUICE_STORE_TIMEOUT');
      expect(elapsed).toBeLessThan(timeoutMs * 1.5);
    }
    expect(settled[1]!.elapsed).toBeGreaterThanOrEqual(timeoutMs - 5);
    await woke;
    // Every request stops counting once Redis answers the calls that carried them.
    await vi.waitFor(() => expect(store.pending).toBe(0), { timeout: 2000 });
    await expect(store.evaluate([check('awake')], T0)).resolves.toHaveLength(1);
  });
});
