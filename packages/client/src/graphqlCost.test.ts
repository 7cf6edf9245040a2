import { describe, expect, it } from 'vitest';
import { GraphqlEndpoint, readGraphqlAnswer, throttledWaitMs } from './graphqlCost.js';

/** The answer Shopify's documentation shows (and @sluice/graphql sends). */
const SHOPIFY = {
  data: { shop: { name: 'x' } },
  extensions: {
    cost: {
      requestedQueryCost: 10,
      actualQueryCost: 10,
      throttleStatus: { maximumAvailable: 2000.0, currentlyAvailable: 1990, restoreRate: 100.0 },
    },
  },
};

const throttled = (retryAfterMs?: number, extra: object = {}) => ({
  errors: [
    { message: 'a first error', extensions: { code: 'BAD_USER_INPUT' } },
    {
      message: 'Throttled',
      extensions: { code: 'THROTTLED', ...(retryAfterMs === undefined ? {} : { retryAfterMs }) },
    },
  ],
  ...extra,
});

describe('readGraphqlAnswer', () => {
  it("reads Shopify's extensions.cost: the requested cost and the throttle status", () => {
    expect(readGraphqlAnswer(SHOPIFY)).toEqual({
      requested: 10,
      status: { maximumAvailable: 2000, currentlyAvailable: 1990, restoreRate: 100 },
      throttled: false,
      retryAfterMs: undefined,
    });
  });

  it('a THROTTLED error without data is a refusal, with its retryAfterMs; with data it ran in part', () => {
    expect(readGraphqlAnswer(throttled(250))).toMatchObject({ throttled: true, retryAfterMs: 250 });
    expect(readGraphqlAnswer(throttled(250, { data: null }))).toMatchObject({ throttled: true });
    expect(readGraphqlAnswer(throttled(undefined))).toMatchObject({
      throttled: true,
      retryAfterMs: undefined,
    });
    expect(readGraphqlAnswer(throttled(250, { data: { a: 1 } }))).toMatchObject({ throttled: false });
    expect(readGraphqlAnswer({ errors: [{ message: 'x', extensions: { code: 'OTHER' } }] })).toMatchObject({
      throttled: false,
    });
  });

  it("reads the cost of a THROTTLED error's own extensions (Mercurius: no top-level extensions on an error)", () => {
    const cost = { requestedQueryCost: 30, throttleStatus: SHOPIFY.extensions.cost.throttleStatus };
    const refused = { errors: [{ message: 'T', extensions: { code: 'THROTTLED', retryAfterMs: 9, cost } }] };
    expect(readGraphqlAnswer(refused)).toEqual({
      requested: 30,
      status: SHOPIFY.extensions.cost.throttleStatus,
      throttled: true,
      retryAfterMs: 9,
    });
  });

  it('retryAfterMs: null (the operation can never fit) is an infinite wait', () => {
    const never = { errors: [{ message: 'T', extensions: { code: 'THROTTLED', retryAfterMs: null } }] };
    expect(readGraphqlAnswer(never)?.retryAfterMs).toBe(Number.POSITIVE_INFINITY);
    expect(throttledWaitMs(readGraphqlAnswer(never)!)).toBe(Number.POSITIVE_INFINITY);
  });

  it('a batch: costs summed, the last status kept, a refusal only when every operation was refused', () => {
    const second = {
      ...SHOPIFY,
      extensions: { cost: { ...SHOPIFY.extensions.cost, requestedQueryCost: 5 } },
    };
    expect(readGraphqlAnswer([SHOPIFY, second])).toMatchObject({ requested: 15, throttled: false });
    expect(readGraphqlAnswer([throttled(100), throttled(300)])).toMatchObject({
      throttled: true,
      retryAfterMs: 300,
    });
    expect(readGraphqlAnswer([throttled(100), SHOPIFY])).toMatchObject({ throttled: false, requested: 10 });
  });

  it('is undefined for what is no GraphQL result', () => {
    for (const body of [null, 'text', 42, [], [1], { error: 'rate_limited', rule: 'r' }, [SHOPIFY, {}]])
      expect(readGraphqlAnswer(body)).toBeUndefined();
  });

  it('leaves out numbers that do not read as points; an available below zero (a debt) is kept', () => {
    const cost = (value: object) => readGraphqlAnswer({ data: {}, extensions: { cost: value } });
    expect(cost({ requestedQueryCost: -1 })?.requested).toBeUndefined();
    expect(cost({ requestedQueryCost: '10' })?.requested).toBeUndefined();
    const status = (throttleStatus: object) => cost({ throttleStatus })?.status;
    expect(status({ maximumAvailable: 100, currentlyAvailable: 5 })).toBeUndefined();
    expect(status({ maximumAvailable: 100, currentlyAvailable: Number.NaN, restoreRate: 1 })).toBeUndefined();
    expect(status({ maximumAvailable: 100, currentlyAvailable: -20, restoreRate: 10 })).toEqual({
      maximumAvailable: 100,
      currentlyAvailable: -20,
      restoreRate: 10,
    });
  });
});

describe('throttledWaitMs', () => {
  const refusal = readGraphqlAnswer({
    ...throttled(undefined),
    extensions: {
      cost: {
        requestedQueryCost: 50,
        throttleStatus: { maximumAvailable: 100, currentlyAvailable: 30, restoreRate: 40 },
      },
    },
  });

  it("takes the error's retryAfterMs first, else the time the missing points take to come back", () => {
    expect(throttledWaitMs({ ...refusal!, retryAfterMs: 120 })).toBe(120);
    expect(throttledWaitMs(refusal!)).toBe(500); // 20 points missing at 40 a second
    expect(throttledWaitMs(readGraphqlAnswer(throttled(undefined))!)).toBeUndefined();
  });
});

describe('GraphqlEndpoint', () => {
  it('waits for the points a cost lacks, restored at the restore rate, less the calls in flight', () => {
    const endpoint = new GraphqlEndpoint();
    expect(endpoint.budget.waitFor(1000, 0)).toBe(0); // nothing known yet
    const status = { maximumAvailable: 100, currentlyAvailable: 40, restoreRate: 20 };
    endpoint.observe(
      endpoint.budget.take(0),
      undefined,
      readGraphqlAnswer({ data: {}, extensions: { cost: { throttleStatus: status } } }),
      0,
    );
    expect(endpoint.budget.waitFor(40, 0)).toBe(0);
    endpoint.budget.take(30); // in flight
    expect(endpoint.budget.waitFor(30, 0)).toBe(1000); // 10 left, 20 missing at 0.02 a ms
    expect(endpoint.budget.waitFor(30, 1000)).toBe(0);
    expect(endpoint.budget.waitFor(101, 0)).toBe(0); // never fits: goes, and the server answers
  });

  it('a debt the server reports holds the next call back until it is paid', () => {
    const endpoint = new GraphqlEndpoint();
    const status = { maximumAvailable: 100, currentlyAvailable: -50, restoreRate: 100 };
    endpoint.observe(
      endpoint.budget.take(0),
      undefined,
      readGraphqlAnswer({ data: {}, extensions: { cost: { throttleStatus: status } } }),
      0,
    );
    expect(endpoint.budget.waitFor(10, 0)).toBe(600);
  });

  it("learns a query's cost from its requestedQueryCost, and forgets the least recently used past 1000", () => {
    const endpoint = new GraphqlEndpoint();
    const query = endpoint.query('{ a }');
    endpoint.observe(0, query, readGraphqlAnswer(SHOPIFY), 0);
    expect(endpoint.query('{ a }').cost).toBe(10);
    for (let i = 0; i < 999; i++) endpoint.query(`{ b${i} }`);
    expect(endpoint.query('{ a }').cost).toBe(10); // used again: now the newest
    for (let i = 0; i < 1000; i++) endpoint.query(`{ c${i} }`);
    expect(endpoint.query('{ a }').cost).toBeUndefined();
  });
});
