/**
 * One process of the race in test/postgres-store.test.ts: `node --import tsx postgres-hammer.ts URL PREFIX N
 * REVERSED` sends N evaluate() calls, as fast as its pool of 4 allows, each with the same two checks (one hot key
 * and a per-process key), in reversed order when REVERSED is 1; prints `{allowed, failed}` as JSON.
 */
import type { Check } from '@sluice/core/store';
import pg from 'pg';
import { PostgresStore } from '../../packages/postgres/src/index.js';

const [url, prefix, n, reversed] = process.argv.slice(2);
const LIMIT = 150;
const hot: Check = {
  rule: 'race',
  tag: 'hotTagAAAAAAAAAAAAAAAA',
  algorithm: 'fixed_window',
  params: { limit: LIMIT, windowMs: 3_600_000, burst: LIMIT },
  cost: 1,
  mode: 'enforce',
};
const own: Check = {
  ...hot,
  rule: 'race_own',
  tag: `own${process.pid}`,
  params: { limit: 1e6, windowMs: 3_600_000, burst: 1e6 },
};
const checks = reversed === '1' ? [own, hot] : [hot, own];

const pool = new pg.Pool({ connectionString: url, max: 4 });
const store = new PostgresStore({
  pool,
  tablePrefix: prefix,
  timeoutMs: 30_000,
  breaker: false,
  sweepEveryMs: false,
});
let allowed = 0;
let failed = 0;
let next = 0;
async function worker(): Promise<void> {
  while (next < Number(n)) {
    next++;
    try {
      const results = await store.evaluate(checks, Date.now());
      if (results[checks.indexOf(hot)]!.allowed) allowed++;
    } catch (error) {
      failed++;
      process.stderr.write(`${(error as Error).message}\n`);
    }
  }
}
await Promise.all([worker(), worker(), worker(), worker()]);
await store.close();
await pool.end();
process.stdout.write(JSON.stringify({ allowed, failed }));
