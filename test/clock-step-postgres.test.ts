/**
 * A stepped-back wall clock on PostgresStore, through createLimiter's defaults: an exhausted window stays exhausted
 * on the database's clock (the store's default) and on the app clock (`clock: 'app'`, the limiter's clock, which
 * never steps back). A private PostgreSQL server; only Date is faked.
 */
import { compileRules, createLimiter } from '@sluice/core';
import { PostgresStore, type PostgresStoreOptions } from '@sluice/postgres';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { postgresSuite, randomTablePrefix } from './support/postgres.js';

const T = Date.UTC(2026, 10, 30, 12, 0, 30);
const HOUR = 3_600_000;
const suite = postgresSuite();
let pool: pg.Pool;
beforeAll(() => {
  pool = new pg.Pool({ connectionString: suite.server.url, max: 4 });
});
afterAll(() => pool.end());
afterEach(() => {
  vi.useRealTimers();
});

const clocks: [string, Partial<PostgresStoreOptions>][] = [
  ['the default (database) clock', {}],
  ["clock: 'app'", { clock: 'app' }],
];

describe.each(clocks)(
  'a limiter on PostgresStore (%s) when the system clock steps back an hour',
  (_, given) => {
    it.each(['fixed_window', 'sliding_window'] as const)(
      '%s: an exhausted window stays exhausted, during the step and after the clock returns',
      async (algorithm) => {
        vi.useFakeTimers({ toFake: ['Date'], now: T });
        const rules = compileRules({
          domain: `clock_${algorithm}`,
          rules: [{ name: 'r', key: ['ip'], algorithm, limit: { requests: 5, per: '1m' } }],
        });
        const store = new PostgresStore({
          pool,
          tablePrefix: randomTablePrefix(),
          createTable: true,
          ...given,
        });
        const limiter = createLimiter({ rules, store });
        const ip = { ip: '192.0.2.7' };
        try {
          for (let i = 0; i < 5; i++) expect((await limiter.check(ip)).allowed).toBe(true);
          expect((await limiter.check(ip)).allowed).toBe(false);

          vi.setSystemTime(T - HOUR);
          const stepped = await limiter.check(ip);
          expect(stepped).toMatchObject({ allowed: false, remaining: 0 });
          expect(stepped.failedOpen).toBe(false);
          expect(stepped.retryAfterMs).toBeGreaterThan(0);
          expect(stepped.retryAfterMs).toBeLessThanOrEqual(120_000);

          vi.setSystemTime(T + 1000);
          expect(await limiter.check(ip)).toMatchObject({ allowed: false, remaining: 0 });
        } finally {
          await limiter.close();
          await store.close();
        }
      },
    );
  },
);
