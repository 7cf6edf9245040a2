/**
 * PostgresStore against a private PostgreSQL server: the store contract suite and the shared vectors of
 * @sluice/core/testing, on the engine's clock (`clock: 'app'`: the suite and the vectors step time themselves).
 */
import { hashText } from '@sluice/core';
import { loadVectors, runVectorCase } from '@sluice/core/testing';
import { PostgresStore } from '@sluice/postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeStoreContract } from './contract/store.js';
import { postgresSuite, randomTablePrefix } from './support/postgres.js';

const suite = postgresSuite();
let pool: pg.Pool;
beforeAll(() => {
  pool = new pg.Pool({ connectionString: suite.server.url, max: 4 });
});
afterAll(() => pool.end());

const storeFor = (label: string) =>
  new PostgresStore({
    pool,
    tablePrefix: randomTablePrefix(label),
    createTable: true,
    clock: 'app',
    timeoutMs: 5000,
    breaker: false,
  });

describeStoreContract('PostgresStore', async () => ({ store: storeFor('contract') }));

describe.each(loadVectors())('$algorithm vectors on PostgreSQL', ({ algorithm, cases }) => {
  it.each(cases)('$name', async (vectorCase) => {
    const store = storeFor('vec');
    const counter = { rule: 'vector', tag: hashText(`${algorithm}:${vectorCase.name}`) };
    try {
      expect(await runVectorCase(store, vectorCase, counter)).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
