/**
 * RedisStore over Redis Sentinel, on both client libraries (an ioredis client given `sentinels`, a node-redis
 * `createSentinel` client), against a real set-up (primary, replica, Sentinel) started here: the primary killed,
 * and a manual SENTINEL FAILOVER. Measured each time: how long limiting paused (checks failed as store errors,
 * never decided silently) and how many counts the new primary lacked (replication is asynchronous).
 */
import type { Check, CheckResult } from '@sluice/core/store';
import { RedisStore, type RedisStoreOptions, recommendedRedisOptions } from '@sluice/redis';
import { Redis } from 'ioredis';
import { createSentinel } from 'redis';
import { afterEach, describe, expect, it } from 'vitest';
import { randomPrefix } from './support/redis.js';
import { PRIMARY_NAME, type SentinelSetup, startSentinelSetup } from './support/sentinel.js';

const LIMIT = 1_000_000;
const check: Check = {
  rule: 'sentinel',
  tag: 'tagFFFFFFFFFFFFFFFFFFFF',
  algorithm: 'fixed_window',
  params: { limit: LIMIT, windowMs: 3_600_000, burst: LIMIT },
  cost: 1,
  mode: 'enforce',
};

type StoreClient = RedisStoreOptions['client'];
type Library = 'ioredis' | 'node-redis';

/** A client of `library` that finds the primary through the set-up's Sentinels; resolves once connected. */
async function sentinelClient(library: Library, setup: SentinelSetup): Promise<[StoreClient, () => void]> {
  if (library === 'ioredis') {
    const client = new Redis({
      sentinels: setup.sentinels,
      name: PRIMARY_NAME,
      ...recommendedRedisOptions,
      sentinelRetryStrategy: () => 100,
    });
    client.on('error', () => {});
    await new Promise((resolve) => client.once('ready', resolve));
    return [client, () => client.disconnect()];
  }
  const client = createSentinel({
    name: PRIMARY_NAME,
    sentinelRootNodes: setup.sentinels.map(({ host, port }) => ({ host, port })),
    nodeClientOptions: { socket: { reconnectStrategy: () => 100 } },
  });
  client.on('error', () => {});
  await client.connect();
  return [client as unknown as StoreClient, () => void client.destroy().catch(() => {})];
}

/** One check's outcome: when it was made (ms since the fault), and its result or its error code. */
interface Outcome {
  readonly at: number;
  readonly result?: CheckResult;
  readonly error?: string;
}

/** What a fault did to limiting, as measured. */
interface Measured {
  /** The longest time from the fault on with no check decided by Redis, ms. */
  readonly pauseMs: number;
  /**
   * Counted before the fault and missing on the new primary (asynchronous replication); negative when checks
   * that had already failed here were counted later (a command the client still held, sent once it reconnected).
   */
  readonly lost: number;
  /** Checks failed as store errors from the fault on. */
  readonly failed: number;
  readonly outcomes: readonly Outcome[];
}

const counted = (result: CheckResult) => LIMIT - result.remaining;

/** Resumed: the Sentinels named the new primary and the last RESUMED_RUN checks each counted one more. */
const RESUMED_RUN = 20;
function resumedOn(outcomes: readonly Outcome[], settledAt: number): boolean {
  const run = outcomes.filter((o) => o.result !== undefined && o.at >= settledAt).slice(-RESUMED_RUN);
  if (run.length < RESUMED_RUN) return false;
  return run.every((o, i) => i === 0 || counted(o.result!) === counted(run[i - 1]!.result!) + 1);
}

/**
 * Checks every 10 ms; `fault` at 300 ms; `settled` resolves once the Sentinels name the new primary; then until
 * 20 more checks were decided by Redis (20 s at most).
 */
async function measure(
  store: RedisStore,
  fault: () => Promise<unknown>,
  settled: () => Promise<unknown>,
): Promise<Measured> {
  const outcomes: Outcome[] = [];
  let faultAt = Number.POSITIVE_INFINITY;
  let settledAt = Number.POSITIVE_INFINITY;
  const started = Date.now();
  while (!resumedOn(outcomes, settledAt) && Date.now() - started < 20_000) {
    if (faultAt === Number.POSITIVE_INFINITY && Date.now() - started >= 300) {
      await fault();
      faultAt = Date.now();
      settled().then(() => {
        settledAt = Date.now() - faultAt;
      });
    }
    const at = Date.now() - faultAt;
    try {
      const [result] = await store.evaluate([check], Date.now());
      outcomes.push({ at, result: result! });
    } catch (error) {
      outcomes.push({ at, error: (error as { code?: string }).code ?? String(error) });
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const decided = outcomes.filter((o) => o.result !== undefined);
  const lastBefore = decided.filter((o) => o.at < 0).at(-1);
  if (lastBefore === undefined || !resumedOn(outcomes, settledAt)) throw new Error('limiting never resumed');
  let pauseMs = 0;
  let previous = lastBefore;
  const after = decided.filter((x) => x.at >= 0);
  for (const o of after) {
    pauseMs = Math.max(pauseMs, o.at - Math.max(0, previous.at));
    previous = o;
  }
  // Every check decided since the fault should have counted one: what the new primary lacks was lost (a client
  // may go on writing to the old primary until the Sentinels demote it).
  const lost = counted(lastBefore.result!) + after.length - counted(after.at(-1)!.result!);
  const failed = outcomes.filter((o) => o.at >= 0 && o.error !== undefined).length;
  return { pauseMs, lost, failed, outcomes };
}

describe.each<Library>(['ioredis', 'node-redis'])('RedisStore on %s over Sentinel', (library) => {
  let setup: SentinelSetup | undefined;
  let closeClient: (() => void) | undefined;
  afterEach(async () => {
    closeClient?.();
    await setup?.stop();
  });

  async function storeOnSentinel(): Promise<RedisStore> {
    setup = await startSentinelSetup();
    const [client, close] = await sentinelClient(library, setup);
    closeClient = close;
    const store = new RedisStore({ client, prefix: randomPrefix(), timeoutMs: 200 });
    const [first] = await store.evaluate([check], Date.now());
    expect(first).toMatchObject({ allowed: true, remaining: LIMIT - 1 });
    expect(store.health().connected).toBe(true);
    return store;
  }

  function expectResumed(store: RedisStore, measured: Measured, fault: string): void {
    const { pauseMs, lost, failed, outcomes } = measured;
    console.log(
      `${library}, ${fault}: limiting paused ${pauseMs} ms, ${failed} checks failed, ${lost} counts lost`,
    );
    // Every check of the pause failed as a store error (the rule's on_store_error decides): none was decided
    // silently.
    for (const o of outcomes) expect(o.result !== undefined || /^ERR_SLUICE/.test(o.error!)).toBe(true);
    expect(pauseMs).toBeLessThan(15_000);
    // Lost: what the old primary took after the Sentinel promoted the replica and before it was demoted, or had
    // not yet replicated: bounded by the Sentinel's reconfiguration (about a second here; 300 checks is 3 s of
    // them). A check that failed here may still have been counted (never more of them than failed).
    expect(lost).toBeLessThanOrEqual(300);
    expect(lost).toBeGreaterThanOrEqual(-failed);
    // Once resumed, each check counts one on the new primary: the run measure() waited for, checked here.
    const run = outcomes
      .filter((o) => o.result !== undefined)
      .slice(-RESUMED_RUN)
      .map((o) => counted(o.result!));
    expect(run).toEqual(run.map((_, i) => run[0]! + i));
    expect(store.health().connected).toBe(true);
  }

  it('the primary killed: counting resumes on the promoted replica', async () => {
    const store = await storeOnSentinel();
    const old = await setup!.primary();
    const primary = setup!.servers.find((s) => s.port === old.port)!;
    const measured = await measure(
      store,
      () => primary.stop(),
      () => setup!.promotedOtherThan(old),
    );
    expectResumed(store, measured, 'primary killed');
    await store.close();
  });

  it('a manual SENTINEL FAILOVER: counting moves to the new primary', async () => {
    const store = await storeOnSentinel();
    const old = await setup!.primary();
    const measured = await measure(
      store,
      () => setup!.failover(),
      () => setup!.promotedOtherThan(old),
    );
    expectResumed(store, measured, 'SENTINEL FAILOVER');
    await store.close();
  });
});
