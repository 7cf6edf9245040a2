/**
 * A rule reloaded under the same name with another algorithm while its keys hold the old algorithm's counters
 * (issue 40): on MemoryStore, a private PostgreSQL and a private Redis, for every ordered pair of algorithms, the
 * next request is counted (never failed open) and the rule goes on limiting. A state of another shape counts
 * afresh; one of the same shape (the period counters, the TATs) is read as the new algorithm's own. And an error
 * raised while deciding is not an outage: PostgresStore's breaker stays closed and nothing says it is unreachable.
 */
import { compileRules, createLimiter, type Limiter, MemoryStore, type RuleSpec } from '@sluice/core';
import {
  ALGORITHM_NAMES,
  type AlgorithmName,
  type Check,
  DecisionError,
  type Store,
} from '@sluice/core/store';
import { PostgresStore } from '@sluice/postgres';
import { RedisStore } from '@sluice/redis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresSuite, randomTablePrefix } from './support/postgres.js';
import { randomPrefix, redisSuite } from './support/redis.js';

const redis = redisSuite();
const postgres = postgresSuite();
let pool: pg.Pool;
beforeAll(() => {
  pool = new pg.Pool({ connectionString: postgres.server.url, max: 4 });
});
afterAll(() => pool.end());

const LIMIT = 3;
/** Same-shape groups: the new algorithm reads the old state as its own (see algorithms/foreignState.test.ts). */
const SAME_SHAPE: readonly (readonly AlgorithmName[])[] = [
  ['fixed_window', 'first_request_window', 'quota'],
  ['gcra', 'leaky_bucket'],
];
const sameShape = (a: AlgorithmName, b: AlgorithmName) =>
  SAME_SHAPE.some((group) => group.includes(a) && group.includes(b));
const PAIRS = ALGORITHM_NAMES.flatMap((a) => ALGORITHM_NAMES.map((b) => [a, b] as const)).filter(
  ([a, b]) => a !== b,
);

function rulesFor(algorithm: AlgorithmName) {
  const limit = algorithm === 'concurrency' ? { concurrent: LIMIT } : { requests: LIMIT, per: '1h' };
  const rule = { name: 'reloaded', match: {}, key: ['ip'], limit, algorithm } as RuleSpec;
  return compileRules({ domain: 'reload', rules: [rule] });
}

/** Warnings a store logs (the unreachable notice would be one). */
function warnings(): { readonly lines: string[]; warn(message: string): void } {
  const lines: string[] = [];
  return { lines, warn: (message) => lines.push(message) };
}

const STORES: readonly { name: string; make: (logger: { warn(m: string): void }) => Store }[] = [
  { name: 'MemoryStore', make: () => new MemoryStore() },
  {
    name: 'PostgresStore',
    make: (logger) =>
      new PostgresStore({
        pool,
        tablePrefix: randomTablePrefix('reload'),
        createTable: true,
        sweepEveryMs: false,
        timeoutMs: 5000,
        logger,
      }),
  },
  {
    name: 'RedisStore',
    make: (logger) =>
      new RedisStore({ client: redis.client, prefix: randomPrefix(), timeoutMs: 5000, logger }),
  },
];

describe.each(STORES)('$name: a rule reloaded with another algorithm', ({ make }) => {
  it('counts the next request on every pair of algorithms, afresh unless the state is of its shape', async () => {
    const logger = warnings();
    const store = make(logger);
    const limiter: Limiter = createLimiter({
      rules: rulesFor('fixed_window'),
      store,
      timeoutMs: 5000,
      logger,
    });
    const seen: string[] = [];
    for (const [i, [from, to]] of PAIRS.entries()) {
      const ip = `198.51.100.${i + 1}`;
      limiter.setRules(rulesFor(from));
      for (let n = 0; n < 2; n++) {
        const before = await limiter.check({ ip });
        expect({ from, allowed: before.allowed, failedOpen: before.failedOpen }).toEqual({
          from,
          allowed: true,
          failedOpen: false,
        });
      }
      limiter.setRules(rulesFor(to));
      let allowed = 0;
      let denied = false;
      for (let n = 0; n <= LIMIT && !denied; n++) {
        const decision = await limiter.check({ ip });
        expect({ from, to, failedOpen: decision.failedOpen }).toEqual({ from, to, failedOpen: false });
        if (decision.allowed) allowed++;
        else denied = true;
      }
      // Afresh: the whole limit; the same shape: what the old counter left (1) up to all of it.
      seen.push(`${from}->${to}: ${allowed}${denied ? ', then denied' : ''}`);
      expect({
        from,
        to,
        denied,
        afresh: allowed === LIMIT || (sameShape(from, to) && allowed >= 1),
      }).toEqual({
        from,
        to,
        denied: true,
        afresh: true,
      });
    }
    expect(seen).toHaveLength(PAIRS.length);
    expect(store.health?.().breaker ?? 'closed').toBe('closed');
    expect(logger.lines).toEqual([]);
    await limiter.close();
  });
});

describe('PostgresStore: an error raised while deciding', () => {
  /** A check built by untyped code, naming an algorithm the registry does not have: the evaluator throws. */
  const broken = (tag: string): Check => ({
    rule: 'broken',
    tag,
    algorithm: 'no_such_algorithm' as AlgorithmName,
    params: { limit: 5, windowMs: 60_000, burst: 5 },
    cost: 1,
    mode: 'enforce',
  });
  const fine: Check = { ...broken('tagFINEFINEFINEFINEFINE'), rule: 'fine', algorithm: 'fixed_window' };

  it('fails that call only: the breaker stays closed, no unreachable notice, other keys counted', async () => {
    const logger = warnings();
    // The default breaker (5 failures): twelve decision errors in a row would open it if they counted.
    const store = new PostgresStore({
      pool,
      tablePrefix: randomTablePrefix('decide'),
      createTable: true,
      sweepEveryMs: false,
      timeoutMs: 5000,
      logger,
    });
    for (let i = 0; i < 12; i++) {
      const error = await store.evaluate([broken(`tagBROKEN${i}AAAAAAAAAAAAA`)], Date.now()).catch((e) => e);
      expect(error).toBeInstanceOf(DecisionError);
      expect((error as DecisionError).rule).toBe('broken');
      expect((error as Error).message).not.toContain('tagBROKEN');
    }
    const [result] = await store.evaluate([fine], Date.now());
    expect(result).toMatchObject({ allowed: true, remaining: 4 });
    expect(result!.degraded).toBeUndefined();
    expect(store.health()).toMatchObject({ connected: true, breaker: 'closed' });
    expect(store.health().failingOpenSince).toBeUndefined();
    expect(logger.lines).toEqual([]);
    await store.close();
  });

  it('a row holding a log that is not one counts afresh', async () => {
    const store = new PostgresStore({
      pool,
      tablePrefix: randomTablePrefix('hostile'),
      createTable: true,
      sweepEveryMs: false,
      timeoutMs: 5000,
    });
    const log: Check = { ...fine, rule: 'log', algorithm: 'sliding_log' };
    await store.evaluate([log], Date.now());
    const [schema, table] = store.table.split('.');
    const updated = await pool.query(
      `UPDATE "${schema}"."${table}" SET state = '{"entries":[null,7]}'::jsonb WHERE rule = 'log'`,
    );
    expect(updated.rowCount).toBe(1);
    // A second store on the table: the first remembers the row it wrote and would not read it again.
    const reader = new PostgresStore({
      pool,
      tablePrefix: table!.replace(/counters$/, ''),
      sweepEveryMs: false,
    });
    const [result] = await reader.evaluate([log], Date.now());
    expect(result).toMatchObject({ allowed: true, remaining: 4 });
    await Promise.all([store.close(), reader.close()]);
  });
});
