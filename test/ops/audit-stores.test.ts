/**
 * The audit log of every store, on real servers: MemoryStore in process, RedisStore on a private redis-server and
 * a 3-master Cluster (ioredis and node-redis), PostgresStore on a private PostgreSQL. Each keeps the entries in
 * order, filters them alike and stays within its bound where it has one.
 */
import { type AuditEntry, type AuditLog, MemoryStore } from '@sluice/core';
import { DEFAULT_AUDIT_ENTRIES } from '@sluice/core/store';
import { PostgresStore } from '@sluice/postgres';
import { auditKey, RedisStore } from '@sluice/redis';
import pg from 'pg';
import { describe, expect, test } from 'vitest';
import { clusterSuite } from '../support/cluster-suite.js';
import { postgresSuite, randomTablePrefix } from '../support/postgres.js';
import { nodeRedisClient, randomPrefix, redisSuite } from '../support/redis.js';

const T0 = Date.parse('2030-01-01T00:00:00Z');

/** Six entries a minute apart: pushes, a reload, a mode change, a ban and an unban on two rules. */
const ENTRIES: readonly AuditEntry[] = [
  ['push', null, { version: 'aaa', hash: 'h1', serial: 1 }],
  ['reload', null, { from: null, to: 'aaa', rules: 2 }],
  ['mode', 'login', { was: 'shadow', now: 'enforce', from: 'aaa', to: 'bbb' }],
  ['ban', 'login', { tag: 'Xq3kz', until: '2030-01-01T01:00:00.000Z', version: 'bbb' }],
  ['unban', 'login', { tag: 'Xq3kz', lifted: true }],
  ['push', null, { version: 'ccc', hash: 'h2', serial: 2, changed: ['login', 'search'] }],
].map(([kind, rule, details], i) => ({
  at: T0 + i * 60_000,
  kind: kind as AuditEntry['kind'],
  actor: i % 2 === 0 ? 'alice' : 'gw-1/42',
  domain: 'api',
  rule: rule as string | null,
  details: details as AuditEntry['details'],
}));

/** What every audit log does with the same six entries. */
async function checkLog(log: AuditLog): Promise<void> {
  for (const entry of ENTRIES) await log.append(entry);
  const all = await log.read();
  expect(all.map(({ id: _id, ...entry }) => entry)).toEqual(ENTRIES);
  expect(new Set(all.map((r) => r.id)).size).toBe(ENTRIES.length);
  const kinds = (records: readonly AuditEntry[]) => records.map((r) => r.kind);
  expect(kinds(await log.read({ kinds: ['push', 'ban'] }))).toEqual(['push', 'ban', 'push']);
  expect(kinds(await log.read({ rule: 'login' }))).toEqual(['mode', 'ban', 'unban']);
  expect(kinds(await log.read({ since: T0 + 3 * 60_000 }))).toEqual(['ban', 'unban', 'push']);
  expect(kinds(await log.read({ limit: 2 }))).toEqual(['unban', 'push']);
  expect(await log.read({ domain: 'other' })).toEqual([]);
  await expect(log.read({ limit: 0 })).rejects.toThrow('limit must be a whole number above 0');
}

describe('MemoryStore', () => {
  test('keeps, orders and filters the entries in process', async () => {
    await checkLog(new MemoryStore().audit);
  });
});

describe('RedisStore on one server', () => {
  const redis = redisSuite();

  test('keeps them in a stream under its own hash tag; reads page by page', async () => {
    const prefix = randomPrefix('audit');
    const store = new RedisStore({ client: redis.client, prefix });
    await checkLog(store.audit);
    expect(await redis.admin.type(auditKey(prefix))).toBe('stream');
    expect(auditKey(prefix)).toBe(`${prefix}:{audit}:log`);
    await store.close();
  });

  test('trims the stream to about its bound, and reads more than a page', async () => {
    const prefix = randomPrefix('audit');
    const store = new RedisStore({ client: redis.client, prefix });
    const entry = ENTRIES[3]!;
    const total = DEFAULT_AUDIT_ENTRIES + 1500;
    for (let from = 0; from < total; from += 500) {
      const batch = Array.from({ length: 500 }, (_, i) =>
        store.audit.append({ ...entry, at: T0 + from + i }),
      );
      await Promise.all(batch);
    }
    const length = await redis.admin.xlen(auditKey(prefix));
    // MAXLEN ~ trims whole stream nodes (100 entries each by default): about the bound, never below it.
    expect(length).toBeGreaterThanOrEqual(DEFAULT_AUDIT_ENTRIES);
    expect(length).toBeLessThan(DEFAULT_AUDIT_ENTRIES + 200);
    const read = await store.audit.read({ limit: 1200 });
    expect(read).toHaveLength(1200);
    expect(read.at(-1)!.at).toBe(T0 + total - 1);
    expect(read.every((r, i) => i === 0 || r.at > read[i - 1]!.at)).toBe(true);
    await store.close();
  });

  test('node-redis: the same through the other transport', async () => {
    const client = await nodeRedisClient(redis.server);
    try {
      const store = new RedisStore({ client, prefix: randomPrefix('audit') });
      await checkLog(store.audit);
      await store.close();
    } finally {
      await client.quit();
    }
  });
});

describe('RedisStore on a Cluster', () => {
  const cluster = clusterSuite();

  test('keeps and reads them on the one node of their slot', async () => {
    const prefix = randomPrefix('audit');
    const store = new RedisStore({ client: cluster.client, prefix });
    await checkLog(store.audit);
    const lengths = await Promise.all(
      cluster.nodes.map((node) => node.xlen(auditKey(prefix)).catch(() => 0)),
    );
    expect(lengths.sort()).toEqual([0, 0, ENTRIES.length]);
    await store.close();
  });
});

describe('PostgresStore', () => {
  const postgres = postgresSuite();

  test('appends rows to <prefix>audit, made with the counters by migrate or createTable', async () => {
    const tablePrefix = randomTablePrefix('audit');
    const store = new PostgresStore({
      connectionString: postgres.server.url,
      tablePrefix,
      createTable: true,
    });
    try {
      await checkLog(store.audit);
      const pool = new pg.Pool({ connectionString: postgres.server.url });
      const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${tablePrefix}audit`);
      await pool.end();
      expect(rows[0].n).toBe(ENTRIES.length);
    } finally {
      await store.close();
    }
  });

  test('a table made before the audit: appends fail until sluice migrate runs again', async () => {
    const tablePrefix = randomTablePrefix('audit');
    const store = new PostgresStore({ connectionString: postgres.server.url, tablePrefix });
    try {
      await expect(store.audit.append(ENTRIES[0]!)).rejects.toThrow(/does not exist/);
      const { migrate } = await import('@sluice/postgres');
      await migrate({ connectionString: postgres.server.url, tablePrefix });
      await store.audit.append(ENTRIES[0]!);
      expect(await store.audit.read()).toHaveLength(1);
    } finally {
      await store.close();
    }
  });
});
