/**
 * PostgresStore on a private PostgreSQL server: what lands in the table, the round trips of a call, the
 * database's clock, the options, the expiry sweep, a race of four processes on one key, and faults (the database
 * paused and resumed, the pool exhausted, the server stopped): a call never hangs and never throws into a request.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { compileRules, createLimiter, parseRules, type RuleSpec, StoreError } from '@sluice/core';
import { type Check, DEFAULT_STALL_MS } from '@sluice/core/store';
import { DEFAULT_MAX_TIMEOUT_MS, migrate, PostgresStore, type PostgresStoreOptions } from '@sluice/postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { postgresSuite, randomTablePrefix, startPostgres } from './support/postgres.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const suite = postgresSuite();
let pool: pg.Pool;
beforeAll(() => {
  pool = new pg.Pool({ connectionString: suite.server.url, max: 4 });
});
afterAll(() => pool.end());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function check(rule: string, limit: number, tag = 'tagAAAAAAAAAAAAAAAAAAA'): Check {
  return {
    rule,
    tag,
    algorithm: 'fixed_window',
    params: { limit, windowMs: 60_000, burst: limit },
    cost: 1,
    mode: 'enforce',
  };
}

function storeOn(p: pg.Pool, options: Partial<PostgresStoreOptions> = {}): PostgresStore {
  return new PostgresStore({
    pool: p,
    tablePrefix: randomTablePrefix(),
    createTable: true,
    timeoutMs: 5000,
    breaker: false,
    sweepEveryMs: false,
    ...options,
  });
}

async function rowsOf(store: PostgresStore): Promise<{ rule: string; tag: string; state: unknown }[]> {
  const [schema, table] = store.table.split('.');
  return (await pool.query(`SELECT rule, tag, state FROM "${schema}"."${table}" ORDER BY rule, tag`)).rows;
}

/** Round trips (ReadyForQuery messages from the server) on every connection `p` hands out from now on. */
function countRoundTrips(p: pg.Pool): { readonly count: number } {
  const counter = { count: 0 };
  const watched = new WeakSet<object>();
  p.on('acquire', (client) => {
    if (watched.has(client)) return;
    watched.add(client);
    (client as unknown as { connection: NodeJS.EventEmitter }).connection.on('readyForQuery', () => {
      counter.count++;
    });
  });
  return counter;
}

const RULES = compileRules(
  parseRules(`
domain: pg
rules:
  # An hour, not a minute: the paused-database test reads this count across a few seconds, and a window aligned to
  # the minute rolled over in between once on a loaded machine.
  - name: per_ip
    match: {}
    key: [ip]
    limit: {requests: 3, per: 1h}
    algorithm: fixed_window
  - name: per_route
    match: {}
    key: [ip, route]
    limit: {requests: 100, per: 60s}
    algorithm: sliding_window
  - name: pay
    match: {route: /pay}
    key: [ip]
    limit: {requests: 100, per: 60s}
    algorithm: token_bucket
    on_store_error: deny
`),
);

describe('the table', () => {
  it('holds one row per counter, keyed by rule and hashed tag: never the address', async () => {
    const store = storeOn(pool);
    const limiter = createLimiter({ rules: RULES, store, timeoutMs: 10_000 });
    for (let i = 0; i < 4; i++) await limiter.check({ ip: '203.0.113.9', route: '/a' });
    const rows = await rowsOf(store);
    expect(rows.map((r) => r.rule)).toEqual(['per_ip', 'per_route']);
    expect(JSON.stringify(rows)).not.toContain('203.0.113');
    for (const row of rows) expect(row.tag).toMatch(/^[A-Za-z0-9_-]{10,}$/);
    await limiter.close();
  });

  it('is created by migrate() in the schema and with the prefix given, idempotently', async () => {
    const options = { pool, schema: 'limits_x', tablePrefix: 'app1_' };
    expect(await migrate(options)).toBe('limits_x.app1_counters');
    expect(await migrate(options)).toBe('limits_x.app1_counters');
    const store = storeOn(pool, { schema: 'limits_x', tablePrefix: 'app1_', createTable: false });
    await store.evaluate([check('r', 5)], Date.now());
    const { rows } = await pool.query('SELECT rule FROM limits_x.app1_counters');
    expect(rows).toEqual([{ rule: 'r' }]);
    await store.close();
  });

  it('is created by `sluice migrate --postgres URL`, the password never printed', async () => {
    const url = suite.server.url.replace('sluice@', 'sluice:secretpw@');
    const args = [
      '--import',
      'tsx',
      'packages/cli/src/bin.ts',
      'migrate',
      '--postgres',
      url,
      '--schema',
      'cli_s',
    ];
    const run = await new Promise<{ code: number; stdout: string }>((resolve) => {
      execFile(process.execPath, [...args, '--table-prefix', 'gw_'], { cwd: ROOT }, (error, stdout) =>
        resolve({ code: error ? Number(error.code) : 0, stdout }),
      );
    });
    expect(run).toMatchObject({ code: 0 });
    expect(run.stdout).toContain('cli_s.gw_counters is ready in postgres://sluice:***@');
    const { rows } = await pool.query("SELECT to_regclass('cli_s.gw_counters') IS NOT NULL AS made");
    expect(rows).toEqual([{ made: true }]);
  });

  it('upgrades a table made before the version column: migrate() adds it, the store then counts on', async () => {
    const prefix = randomTablePrefix('old');
    await pool.query(`CREATE TABLE public.${prefix}counters (rule text NOT NULL, tag text NOT NULL, state jsonb,
      expires_at double precision NOT NULL, PRIMARY KEY (rule, tag))`);
    const store = storeOn(pool, { tablePrefix: prefix, createTable: false });
    const error = await store.evaluate([check('r', 5)], Date.now()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as Error).message).toContain('lacks the version column: run `sluice migrate');
    await migrate({ pool, tablePrefix: prefix });
    expect((await store.evaluate([check('r', 5)], Date.now()))[0]!.remaining).toBe(4);
    expect((await store.evaluate([check('r', 5)], Date.now()))[0]!.remaining).toBe(3);
    await store.close();
  });

  it('fails the call, naming the migration, when the table is missing and not to be created', async () => {
    const store = storeOn(pool, { createTable: false });
    const error = await store.evaluate([check('r', 5)], Date.now()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as Error).message).toContain('sluice migrate --postgres URL');
    await store.close();
  });

  it('refuses misspelled options with a did-you-mean, and unsafe schema or prefix names', () => {
    expect(() => new PostgresStore({ pool, tablePrefx: 'x_' } as PostgresStoreOptions)).toThrow(
      /tablePrefix/,
    );
    expect(() => storeOn(pool, { schema: 'a"; DROP TABLE x; --' })).toThrow(/schema must be letters/);
    expect(() => storeOn(pool, { tablePrefix: 'a-b' })).toThrow(/tablePrefix must be letters/);
    expect(() => storeOn(pool, { tablePrefix: 'x'.repeat(60) })).toThrow(/too long/);
    expect(() => new PostgresStore({ pool, connectionString: suite.server.url })).toThrow(/one of pool/);
  });

  it('a connection string gets a pool of its own, ended on close', async () => {
    const store = new PostgresStore({
      connectionString: suite.server.url,
      createTable: true,
      tablePrefix: randomTablePrefix(),
      timeoutMs: 5000, // a new connection and the DDL: not this test's point on a loaded machine
    });
    const [result] = await store.evaluate([check('r', 5)], Date.now());
    expect(result!.remaining).toBe(4);
    await store.close();
  });
});

describe('one call', () => {
  it('is one round trip however many rules, rows not seen yet included; a denial on them two', async () => {
    const counted = new pg.Pool({ connectionString: suite.server.url, max: 1 });
    const trips = countRoundTrips(counted);
    const store = storeOn(counted);
    await store.evaluate([check('warm', 5)], Date.now()); // the table made, the connection opened
    const before = trips.count;
    await store.evaluate([check('a', 5), check('b', 5), check('c', 5)], Date.now());
    expect(trips.count - before).toBe(1); // no live row expected, none found: written at once
    const denied = trips.count;
    await store.evaluate([check('a', 5), check('d', 0)], Date.now()); // denied, d unseen: lock, then roll back
    expect(trips.count - denied).toBe(2);
    await store.close();
    await counted.end();
  });

  it('is one round trip per call on a hot key this process wrote last, exact to the limit', async () => {
    const counted = new pg.Pool({ connectionString: suite.server.url, max: 1 });
    const store = storeOn(counted);
    await store.evaluate([check('warm', 5)], Date.now()); // the table made, the connection opened
    const trips = countRoundTrips(counted);
    const answers = [];
    for (let i = 0; i < 50; i++) answers.push((await store.evaluate([check('hot', 40)], Date.now()))[0]!);
    expect(answers.filter((a) => a.allowed)).toHaveLength(40);
    expect(answers.map((a) => a.remaining).slice(0, 3)).toEqual([39, 38, 37]);
    expect(trips.count).toBe(50); // one each, denials included
    await store.close();
    await counted.end();
  });

  it('falls back to the locked path when another process wrote a row since, and counts every call', async () => {
    const counted = new pg.Pool({ connectionString: suite.server.url, max: 1 });
    const trips = countRoundTrips(counted);
    const tablePrefix = randomTablePrefix('shared');
    const mine = storeOn(counted, { tablePrefix });
    const other = storeOn(pool, { tablePrefix });
    await mine.evaluate([check('shared', 10)], Date.now());
    await mine.evaluate([check('shared', 10)], Date.now());
    const before = trips.count;
    expect((await other.evaluate([check('shared', 10)], Date.now()))[0]!.remaining).toBe(7);
    expect((await mine.evaluate([check('shared', 10)], Date.now()))[0]!.remaining).toBe(6);
    expect(trips.count - before).toBe(3); // the version changed: nothing written, then lock and commit
    expect((await mine.evaluate([check('shared', 10)], Date.now()))[0]!.remaining).toBe(5);
    expect(trips.count - before).toBe(4);
    await mine.close();
    await other.close();
    await counted.end();
  });

  it('keeps nothing of a one-round-trip statement that met a row another store wrote: all or nothing', async () => {
    const counted = new pg.Pool({ connectionString: suite.server.url, max: 1 });
    const trips = countRoundTrips(counted);
    const tablePrefix = randomTablePrefix('guess');
    const other = storeOn(pool, { tablePrefix });
    const mine = storeOn(counted, { tablePrefix });
    await other.evaluate([check('taken', 1)], Date.now());
    await mine.evaluate([check('warm', 5)], Date.now()); // the clock read, the connection opened
    const before = trips.count;
    // 'fresh' is written by the statement before it meets 'taken' live: the whole statement is undone.
    const answers = await mine.evaluate([check('fresh', 5), check('taken', 1)], Date.now());
    expect(answers.map((a) => a.allowed)).toEqual([true, false]);
    expect(trips.count - before).toBe(3); // the statement failed on purpose, then lock and roll back
    expect((await rowsOf(mine)).map((r) => r.rule)).toEqual(['taken', 'warm']);
    await mine.close();
    await other.close();
    await counted.end();
  });

  it('is all or nothing: a call a rule denies consumes nothing in the others, and leaves no rows', async () => {
    const store = storeOn(pool);
    await store.evaluate([check('narrow', 1)], Date.now());
    const denied = await store.evaluate([check('wide', 10), check('narrow', 1)], Date.now());
    expect(denied.map((r) => r.allowed)).toEqual([true, false]);
    expect((await rowsOf(store)).map((r) => r.rule)).toEqual(['narrow']);
  });

  it("takes the database's clock: gateways an hour apart count in one window", async () => {
    const store = storeOn(pool, { clock: 'database' });
    const hourAhead = Date.now() + 3_600_000;
    const answers = [];
    for (const now of [Date.now(), hourAhead, Date.now()])
      answers.push((await store.evaluate([check('r', 2)], now))[0]!.allowed);
    expect(answers).toEqual([true, true, false]);
    const app = storeOn(pool, { clock: 'app' });
    const appAnswers = [];
    for (const now of [Date.now(), hourAhead, Date.now()])
      appAnswers.push((await app.evaluate([check('r', 2)], now))[0]!.allowed);
    expect(appAnswers).toEqual([true, true, true]); // the engine's clocks: two windows
    await store.close();
    await app.close();
  });

  it('bans a key after repeated denials in its rows, and unban lifts it', async () => {
    const store = storeOn(pool, { clock: 'app' });
    const ban = { after: 2, withinMs: 60_000, forMs: 60_000 };
    const banned = { ...check('banned', 1), policy: { ban } };
    const now = Date.now();
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push((await store.evaluate([banned], now + i))[0]!);
    expect(answers.map((a) => a.allowed)).toEqual([true, false, false, false]);
    expect(answers[2]).toMatchObject({ bannedUntil: now + 2 + 60_000, banStarted: true });
    expect((await rowsOf(store)).map((r) => r.rule).sort()).toEqual(['banned', 'banned:ban']);
    expect(await store.unban('banned', banned.tag)).toBe(true);
    expect(await store.unban('banned', banned.tag)).toBe(false);
    const after = (await store.evaluate([banned], now + 5))[0]!;
    expect(after.bannedUntil).toBeUndefined(); // denied by the limit alone
    await store.close();
  });

  it('gives a concurrency lease back in one transaction', async () => {
    const store = storeOn(pool);
    const lease = { ...check('conc', 1), algorithm: 'concurrency' as const, leaseId: 'lease1' };
    expect((await store.evaluate([lease], Date.now()))[0]!.allowed).toBe(true);
    expect((await store.evaluate([{ ...lease, leaseId: 'lease2' }], Date.now()))[0]!.allowed).toBe(false);
    await store.release(
      [{ rule: 'conc', tag: lease.tag, algorithm: 'concurrency', id: 'lease1', scope: 'store' }],
      Date.now(),
    );
    expect((await store.evaluate([{ ...lease, leaseId: 'lease2' }], Date.now()))[0]!.allowed).toBe(true);
    await store.close();
  });
});

describe('the calls of one turn: one statement', () => {
  /** A store on a pool of one connection, its table made and the clock read, and the round trips from then on. */
  async function warmStore(options: Partial<PostgresStoreOptions> = {}) {
    const counted = new pg.Pool({ connectionString: suite.server.url, max: 1 });
    const store = storeOn(counted, options);
    await store.evaluate([check('warm', 5)], Date.now());
    return { counted, store, trips: countRoundTrips(counted) };
  }

  it('is one round trip for 50 calls on one hot key, exact to the limit', async () => {
    const { counted, store, trips } = await warmStore();
    await store.evaluate([check('hot', 40)], Date.now()); // seen: the batch decides on it
    const before = trips.count;
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => store.evaluate([check('hot', 40)], Date.now())),
    );
    expect(trips.count - before).toBe(1);
    expect(answers.filter(([a]) => a!.allowed)).toHaveLength(39);
    expect(answers.map(([a]) => a!.remaining).slice(0, 3)).toEqual([38, 37, 36]); // in turn, in call order
    expect((await store.evaluate([check('hot', 40)], Date.now()))[0]!.allowed).toBe(false);
    await store.close();
    await counted.end();
  });

  it('is all or nothing per call: a call denied in the batch consumes nothing in its other rows', async () => {
    const { counted, store } = await warmStore();
    await store.evaluate([check('narrow', 3)], Date.now());
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        store.evaluate([check('wide', 10, `wide${i}`), check('narrow', 3)], Date.now()),
      ),
    );
    expect(answers.map(([, narrow]) => narrow!.allowed)).toEqual([
      true,
      true,
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
    // Only the two admitted calls left a row under 'wide'.
    expect((await rowsOf(store)).filter((r) => r.rule === 'wide').map((r) => r.tag)).toEqual([
      'wide0',
      'wide1',
    ]);
    await store.close();
    await counted.end();
  });

  it('keeps the other calls when one meets a row another process wrote: that one alone takes the locked path', async () => {
    const tablePrefix = randomTablePrefix('batch');
    const { counted, store, trips } = await warmStore({ tablePrefix });
    const other = storeOn(pool, { tablePrefix });
    await store.evaluate([check('moved', 10)], Date.now());
    await store.evaluate([check('still', 10)], Date.now());
    expect((await other.evaluate([check('moved', 10)], Date.now()))[0]!.remaining).toBe(8);
    const before = trips.count;
    const [[moved], [still]] = await Promise.all([
      store.evaluate([check('moved', 10)], Date.now()),
      store.evaluate([check('still', 10)], Date.now()),
    ]);
    expect(moved!.remaining).toBe(7); // counted on the row as the other process left it
    expect(still!.remaining).toBe(8);
    // The batch failed on 'moved' (nothing kept); 'still' went again alone; 'moved' locked, then committed.
    expect(trips.count - before).toBe(4);
    await store.close();
    await other.close();
    await counted.end();
  });

  it('is a prepared statement: parsed once per connection, whatever the rows', async () => {
    const { counted, store } = await warmStore();
    for (let i = 1; i <= 5; i++) {
      await Promise.all(
        Array.from({ length: i }, (_, k) =>
          store.evaluate([check('p', 100, `tag${k}`), check('q', 100)], Date.now()),
        ),
      );
    }
    // The pool's one connection: the statement the store prepared on it, and how often it ran.
    const prepared = await counted.query(
      "SELECT generic_plans + custom_plans AS runs FROM pg_prepared_statements WHERE name LIKE 'sluice_batch_%'",
    );
    expect(prepared.rows.map((row) => Number(row.runs))).toEqual([5]);
    await store.close();
    await counted.end();
  });
});

describe('hot keys', () => {
  const EVERYONE = { name: 'everyone', global: true, key: [], limit: { requests: 200, per: '60s' } };
  const limiterOn = (store: PostgresStore, rule: Partial<RuleSpec>) =>
    createLimiter({ rules: compileRules({ rules: [{ ...EVERYONE, ...rule } as RuleSpec] }), store });

  it('local leases: one transaction, one round trip, per batch of K requests', async () => {
    const counted = new pg.Pool({ connectionString: suite.server.url, max: 1 });
    const store = storeOn(counted);
    await store.evaluate([check('warm', 1)], Date.now()); // the table made, the connection opened
    const trips = countRoundTrips(counted);
    const limiter = limiterOn(store, { lease: { batch: 20 } });
    let allowed = 0;
    for (let i = 0; i < 100; i++) if ((await limiter.check({})).allowed) allowed++;
    expect(allowed).toBe(100);
    expect(trips.count).toBe(5); // one round trip per batch
    await limiter.close();
    await counted.end();
  });

  it('local leases: gateways sharing the table never spend more than it granted in one window', async () => {
    const prefix = randomTablePrefix('lease');
    await migrate({ pool, tablePrefix: prefix });
    const gateways = [1, 2, 3, 4].map(() =>
      limiterOn(storeOn(pool, { tablePrefix: prefix }), { lease: { batch: 15 } }),
    );
    let allowed = 0;
    for (let i = 0; i < 400; i++) if ((await gateways[i % 4]!.check({})).allowed) allowed++;
    expect(allowed).toBe(195); // units are counted in the table when taken: 13 batches of 15 fit in 200
    for (const gateway of gateways) await gateway.close();
  });

  it('shards: the counter is split over N rows, and the limit still holds', async () => {
    const store = storeOn(pool);
    const limiter = limiterOn(store, { shards: 8 });
    let allowed = 0;
    for (let i = 0; i < 400; i++) if ((await limiter.check({})).allowed) allowed++;
    expect(allowed).toBe(200);
    expect(new Set((await rowsOf(store)).map((r) => r.tag)).size).toBe(8);
    await limiter.close();
  });
});

describe('the expiry sweep', () => {
  it('deletes expired rows in bounded batches, never live ones', async () => {
    const store = storeOn(pool, { sweepBatch: 1000 });
    await store.evaluate([check('live', 5)], Date.now());
    const [schema, table] = store.table.split('.');
    await pool.query(
      `INSERT INTO "${schema}"."${table}" (rule, tag, state, expires_at)
       SELECT 'old', 't' || i, '{}'::jsonb, 1000 FROM generate_series(1, 12500) AS i`,
    );
    expect(await store.sweep()).toBe(10_000); // at most 10 statements of 1000 rows per sweep
    expect(await store.sweep()).toBe(2500);
    expect((await rowsOf(store)).map((r) => r.rule)).toEqual(['live']);
    await store.close();
  });
});

describe('a race of four processes on one key', () => {
  function hammer(
    prefix: string,
    n: number,
    reversed: boolean,
  ): Promise<{ allowed: number; failed: number }> {
    return new Promise((resolve, reject) => {
      execFile(
        process.execPath,
        [
          '--import',
          'tsx',
          'test/support/postgres-hammer.ts',
          suite.server.url,
          prefix,
          String(n),
          reversed ? '1' : '0',
        ],
        { cwd: ROOT },
        (error, stdout, stderr) =>
          error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
      );
    });
  }

  it('admits exactly the limit, with no lost update and no deadlock (checks sent in both orders)', async () => {
    const prefix = randomTablePrefix('race');
    await migrate({ pool, tablePrefix: prefix });
    const started = Date.now();
    const runs = await Promise.all([0, 1, 2, 3].map((i) => hammer(prefix, 100, i % 2 === 1)));
    const seconds = (Date.now() - started) / 1000;
    expect(runs.map((r) => r.failed)).toEqual([0, 0, 0, 0]);
    expect(runs.reduce((sum, r) => sum + r.allowed, 0)).toBe(150);
    console.log(
      `race: 4 processes x 100 calls on one hot key in ${seconds.toFixed(1)} s (node start included)`,
    );
  });
});

/** A store on the default time limits and breaker, with a pool of its own, quiet. */
function defaultStoreOn(url: string): PostgresStore {
  return new PostgresStore({
    connectionString: url,
    tablePrefix: randomTablePrefix(),
    createTable: true,
    sweepEveryMs: false,
    logger: { warn: () => {} },
  });
}

/** Checks from `loops` loops, one after another each (5 ms apart), until `stop()`: each one's time and outcome. */
function traffic(store: PostgresStore, loops: number) {
  const outcomes: { at: number; ms: number; ok: boolean }[] = [];
  let running = true;
  const t0 = performance.now();
  const loopsDone = Array.from({ length: loops }, async (_, i) => {
    while (running) {
      const started = performance.now();
      const ok = await store.evaluate([check('t', 1_000_000, `tag${i}AAAAAAAAAAAAAAAAAA`)], Date.now()).then(
        () => true,
        () => false,
      );
      outcomes.push({ at: started - t0, ms: performance.now() - started, ok });
      await sleep(5);
    }
  });
  return {
    outcomes,
    stop: async () => {
      running = false;
      await Promise.all(loopsDone);
    },
  };
}

describe('faults: never a hang, never a throw into a request', () => {
  it('a paused database: calls time out, fail by on_store_error, and a late call counts nothing', async () => {
    const server = await startPostgres();
    const own = new pg.Pool({ connectionString: server.url, max: 4 });
    own.on('error', () => {});
    const store = storeOn(own, { timeoutMs: 300 });
    const limiter = createLimiter({ rules: RULES, store });
    try {
      await limiter.check({ ip: '198.51.100.1', route: '/pay' }); // counted: 2 of 3 left on per_ip
      server.pause();
      const started = Date.now();
      const paused = await limiter.check({ ip: '198.51.100.1', route: '/pay' });
      const open = await limiter.check({ ip: '198.51.100.1', route: '/a' });
      expect(Date.now() - started).toBeLessThan(2000);
      expect(paused.allowed).toBe(false); // pay: on_store_error deny
      expect(paused.failedOpen).toBe(true);
      expect(open).toMatchObject({ allowed: true, failedOpen: true });
      server.resume();
      await sleep(1000); // the paused calls finish their first round trip, see their time is up, roll back
      const again = await limiter.check({ ip: '198.51.100.1', route: '/b' });
      expect(again.failedOpen).toBe(false);
      expect(again.results.find((r) => r.rule === 'per_ip')!.remaining).toBe(1); // the paused calls counted nothing
    } finally {
      server.resume();
      await limiter.close();
      await own.end();
      await server.stop();
    }
  });

  it('the default time limit: a paused database holds the first call for the stall time (not maxTimeoutMs), the next for timeoutMs', async () => {
    const server = await startPostgres();
    const own = new pg.Pool({ connectionString: server.url, max: 4 });
    own.on('error', () => {});
    const store = new PostgresStore({
      pool: own,
      tablePrefix: randomTablePrefix(),
      createTable: true,
      breaker: false,
    });
    try {
      await store.evaluate([check('d', 5)], Date.now()); // the table made, a connection open
      server.pause();
      let started = Date.now();
      await expect(store.evaluate([check('d', 5)], Date.now())).rejects.toMatchObject({
        code: 'ERR_SLUICE_STORE_TIMEOUT',
      });
      expect(Date.now() - started).toBeGreaterThanOrEqual(DEFAULT_STALL_MS - 5);
      expect(Date.now() - started).toBeLessThan(DEFAULT_MAX_TIMEOUT_MS / 2);
      started = Date.now();
      await expect(store.evaluate([check('d', 5)], Date.now())).rejects.toMatchObject({
        code: 'ERR_SLUICE_STORE_TIMEOUT',
      });
      expect(Date.now() - started).toBeLessThan(DEFAULT_MAX_TIMEOUT_MS / 2);
      server.resume();
      // Once the database answers again (the late calls included), calls get the long limit again and count.
      await vi.waitFor(
        async () => expect((await store.evaluate([check('d', 5)], Date.now()))[0]!.allowed).toBe(true),
        {
          timeout: 10_000,
          interval: 100,
        },
      );
    } finally {
      server.resume();
      await store.close();
      await own.end();
      await server.stop();
    }
  });

  it('paused (SIGSTOP) under traffic: no call waits much past the stall time; counting resumes after SIGCONT', async () => {
    const server = await startPostgres();
    const store = defaultStoreOn(server.url);
    const run = traffic(store, 10);
    try {
      await sleep(500);
      server.pause();
      await sleep(1500);
      server.resume();
      await sleep(2500);
    } finally {
      server.resume();
      await run.stop();
    }
    const outcomes = run.outcomes;
    try {
      // Target 300 ms (bench/outage.ts measures it); room here for a shared machine.
      expect(Math.max(...outcomes.map((o) => o.ms))).toBeLessThan(700);
      expect(outcomes.some((o) => !o.ok)).toBe(true);
      const last = outcomes.filter((o) => o.at > 3500);
      expect(last.length).toBeGreaterThan(0);
      expect(last.every((o) => o.ok)).toBe(true);
    } finally {
      await store.close();
      await server.stop();
    }
  });

  it('killed under traffic (connections held mid-call): no crash, calls fail fast', async () => {
    const server = await startPostgres();
    const store = defaultStoreOn(server.url);
    const run = traffic(store, 10);
    try {
      await sleep(500);
      await server.kill(); // a connection the store holds between two queries breaks: pg emits 'error' on it
      await sleep(1500);
    } finally {
      await run.stop();
      await store.close();
      await server.stop();
    }
    const after = run.outcomes.filter((o) => o.at > 1000);
    expect(run.outcomes.filter((o) => o.at < 400).every((o) => o.ok)).toBe(true);
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((o) => !o.ok)).toBe(true);
    expect(Math.max(...after.map((o) => o.ms))).toBeLessThan(700);
  });

  it('an exhausted pool: the call times out instead of queuing, and counts nothing once a connection frees', async () => {
    const small = new pg.Pool({ connectionString: suite.server.url, max: 1 });
    const prefix = randomTablePrefix('pool');
    await migrate({ pool: small, tablePrefix: prefix });
    // Two stores on one table and pool: a short time limit for the call that must time out, a long one for the
    // calls that must count, so that a loaded machine cannot time those out too.
    const short = storeOn(small, { tablePrefix: prefix, createTable: false, timeoutMs: 200 });
    const patient = storeOn(small, { tablePrefix: prefix, createTable: false });
    await patient.evaluate([check('r', 5)], Date.now());
    const held = await small.connect();
    const error = await short.evaluate([check('r', 5)], Date.now()).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ERR_SLUICE_STORE_TIMEOUT' });
    // Answered while its request for a connection still waits in the pool: it timed out instead of queuing.
    expect(small.waitingCount).toBe(1);
    held.release();
    // The pool hands connections out in order: the late call gets this one first, and must give it back unused.
    const [result] = await patient.evaluate([check('r', 5)], Date.now());
    expect(result!.remaining).toBe(3); // the first call and this one: the late one counted nothing
    await short.close();
    await patient.close();
    await small.end();
  });

  it('a stopped server: calls fail fast by on_store_error, idle connections break without crashing', async () => {
    const server = await startPostgres();
    const own = new pg.Pool({ connectionString: server.url, max: 4, connectionTimeoutMillis: 1000 });
    const warnings: string[] = [];
    const store = storeOn(own, { timeoutMs: 500, logger: { warn: (m) => warnings.push(m) } });
    const limiter = createLimiter({ rules: RULES, store });
    try {
      expect((await limiter.check({ ip: '198.51.100.2', route: '/a' })).failedOpen).toBe(false);
      await server.kill();
      await sleep(200); // the idle connection's error reaches the pool
      const started = Date.now();
      const open = await limiter.check({ ip: '198.51.100.2', route: '/a' });
      const pay = await limiter.check({ ip: '198.51.100.2', route: '/pay' });
      expect(Date.now() - started).toBeLessThan(2000);
      expect(open).toMatchObject({ allowed: true, failedOpen: true });
      expect(pay).toMatchObject({ allowed: false, failedOpen: true });
      expect(store.health().connected).toBe(true); // breaker off in this test: only the failures say it
    } finally {
      await limiter.close();
      await own.end().catch(() => {});
      await server.stop();
    }
  });
});
