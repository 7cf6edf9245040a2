/**
 * The budget's behaviour, the same on every server, in both ways to run (standalone, inside an adapter) and on
 * every store: each server's test file gives a harness (a real server on a free loopback port) and runs these.
 */
import type { Limiter, Store } from '@sluice/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type Answer,
  actualOf,
  BUDGET,
  codeOf,
  EvaluationCounter,
  estimateOf,
  MAX_COST,
  post,
  type StoreKind,
  world,
} from './support.js';

/** A server under test, with the limiter it decides with and the clock that limiter reads. */
export interface Harness {
  readonly url: string;
  readonly limiter: Limiter;
  close(): Promise<void>;
}

export interface HarnessOptions {
  readonly batch?: 'each' | 'whole';
  readonly throttledStatus?: 429 | 200;
  readonly store: Store;
  readonly clock: () => number;
}

/** Makes a server; `inAdapter`: decided by a Sluice adapter (batches as one, one store call with HTTP rules). */
export interface ServerKind {
  readonly name: string;
  readonly inAdapter: boolean;
  make(options: HarnessOptions): Promise<Harness>;
}

export const T0 = Date.UTC(2026, 0, 5, 12, 0, 0);
const FEW = 'query Few { books(first: 10) { title author { name } } }';
const MANY = 'query Many { search(term: "x") { title author { name } } }';
const ONE = 'query One { books(first: 1) { title } }';
const DEEP = `{ books(first: 1) { related { related { related { related { related { related { related { related { title } } } } } } } } } }`;

/** Points left in `key`'s budget, read with a check that charges nothing. */
async function left(limiter: Limiter, key = 'key-a'): Promise<number> {
  const decision = await limiter.check({ api_key: key, graphql_type: 'query', graphql_cost: '0' });
  const result = decision.results.find((one) => one.rule === BUDGET.name);
  if (result === undefined) throw new Error('the budget rule did not apply to the probe');
  return result.remaining;
}

/** A query of `books(first: n)` whose estimate is above half the budget: two of them do not fit together. */
function halfBudgetQuery(): string {
  for (let n = 1; n < 100; n++) {
    const query = `query Half${n} { books(first: ${n}) { title author { name } } }`;
    if (estimateOf(query).cost > 50) return query;
  }
  throw new Error('no query costs more than half the budget');
}

export function budgetScenarios(server: ServerKind, stores: readonly StoreKind[]): void {
  describe.each(stores)(`${server.name} on $name`, (kind) => {
    let clock = T0;
    let store: EvaluationCounter;
    let harness: Harness | undefined;
    const url = () => harness!.url;

    async function start(options: Omit<HarnessOptions, 'store' | 'clock'> = {}): Promise<Harness> {
      clock = T0;
      store = new EvaluationCounter(kind.make());
      const made = await server.make({ ...options, store, clock: () => clock });
      harness = made;
      return made;
    }

    beforeEach(() => world.reset());
    afterEach(async () => {
      await harness?.close();
      harness = undefined;
    });

    it('charges the estimate, settles down to the actual cost, and says both in extensions.cost', async () => {
      const { limiter } = await start();
      world.stock = 3;
      const estimate = estimateOf(FEW).cost;
      const answer = await post(url(), { query: FEW });
      expect(answer.status).toBe(200);
      expect(answer.body.data?.books).toHaveLength(3);
      const actual = actualOf(FEW, answer.body.data);
      expect(actual).toBeLessThan(estimate);
      expect(answer.body.extensions?.cost).toEqual({
        requestedQueryCost: estimate,
        actualQueryCost: actual,
        throttleStatus: { maximumAvailable: 100, currentlyAvailable: 100 - actual, restoreRate: 1 },
      });
      expect(answer.headers.get('ratelimit')).toMatch(/^"(graphql_points|per_ip)";r=\d+;t=\d+$/);
      expect(world.calls.books).toBe(1);
      expect(await left(limiter)).toBe(100 - actual);
      expect(store.settles).toBe(1);
    });

    it('settles up past the budget into debt, then throttles with the exact retry time', async () => {
      const { limiter } = await start();
      world.hits = 30;
      const spent = await post(url(), { query: MANY });
      expect(spent.status).toBe(200);
      const actual = actualOf(MANY, spent.body.data);
      const debt = actual - 100;
      expect(estimateOf(MANY).cost).toBeLessThan(actual);
      // Owed, and less than a whole budget (a larger debt is paid a budget at a time: Retry-After is then
      // the time until the budget is whole again).
      expect(debt).toBeGreaterThan(0);
      expect(debt + estimateOf(ONE).cost).toBeLessThan(100);
      expect(spent.body.extensions?.cost).toMatchObject({
        requestedQueryCost: estimateOf(MANY).cost,
        actualQueryCost: actual,
        throttleStatus: { currentlyAvailable: 0 },
      });
      const cost = estimateOf(ONE).cost;
      const wait = (debt + cost) * 1000;
      const throttled = await post(url(), { query: ONE });
      expectThrottled(throttled, 429, wait);
      expect(throttled.body.extensions?.cost ?? throttled.body.errors?.[0]?.extensions?.cost).toMatchObject({
        requestedQueryCost: cost,
        actualQueryCost: null,
        throttleStatus: { maximumAvailable: 100, currentlyAvailable: 0, restoreRate: 1 },
      });
      clock += wait - 1;
      expect(codeOf((await post(url(), { query: ONE })).body)).toBe('THROTTLED');
      clock += 1;
      const served = await post(url(), { query: ONE });
      expect(served.status).toBe(200);
      expect(served.body.data?.books).toHaveLength(1);
      expect(world.calls.books).toBe(1);
      expect(await left(limiter)).toBe(0);
    });

    it('refuses an operation above maxCost before execution: no resolver runs, nothing is charged', async () => {
      const { limiter } = await start();
      const answer = await post(url(), { query: '{ expensive }' });
      expect(estimateOf('{ expensive }').cost).toBeGreaterThan(MAX_COST);
      expect(answer.status).toBe(400);
      expect(codeOf(answer.body)).toBe('COST_ESTIMATED_TOO_EXPENSIVE');
      expect(answer.body.data ?? null).toBeNull();
      expect(world.calls.expensive).toBe(0);
      expect(await left(limiter)).toBe(100);
    });

    it('answers bad input with the GraphQL error a user expects and never charges it', async () => {
      const { limiter } = await start();
      const cases: readonly [unknown, RegExp][] = [
        [{ query: '{ books(first: 1) { title }' }, /Syntax Error/],
        [{ query: '{ books(first: 1) { price } }' }, /Cannot query field "price"/],
        [
          { query: 'query A { books(first: 1) { title } }', operationName: 'B' },
          /Unknown operation named "B"/,
        ],
        [
          { query: 'query V($n: Int!) { books(first: $n) { title } }', variables: { n: 'abc' } },
          /Variable "\$n" got invalid value "abc"/,
        ],
        [{ query: DEEP }, /depth|deep/i],
      ];
      for (const [body, message] of cases) {
        const answer = await post(url(), body);
        expect(answer.body.errors?.[0]?.message, JSON.stringify(body)).toMatch(message);
        expect(answer.body.data ?? null).toBeNull();
      }
      const deep = await post(url(), { query: DEEP });
      expect(codeOf(deep.body)).toBe('COST_BOUNDS_EXCEEDED');
      expect(world.total()).toBe(0);
      expect(await left(limiter)).toBe(100);
    });

    it('never spends more than the budget when operations race', async () => {
      const { limiter } = await start();
      const query = 'query Race { books(first: 6) { title author { name } } }';
      const cost = estimateOf(query).cost;
      const fit = Math.floor(100 / cost);
      const answers = await Promise.all(Array.from({ length: fit + 4 }, () => post(url(), { query })));
      expect(actualOf(query, answers.find((one) => one.status === 200)?.body.data)).toBe(cost);
      expect(answers.filter((one) => one.status === 200)).toHaveLength(fit);
      expect(answers.filter((one) => codeOf(one.body) === 'THROTTLED')).toHaveLength(4);
      expect(world.calls.books).toBe(fit);
      expect(await left(limiter)).toBe(100 - fit * cost);
    });

    if (server.inAdapter)
      it('decides the budget with the HTTP rules of the request in ONE store call, and settles in one more', async () => {
        await start();
        world.stock = 3;
        const answer = await post(url(), { query: 'query Few { books(first: 10) { title } }' });
        expect(answer.status).toBe(200);
        expect(store.calls).toHaveLength(1);
        expect([...(store.calls[0] ?? [])].sort()).toEqual(['graphql_points', 'graphql_route', 'per_ip']);
        expect(store.settles).toBe(1);
        // Another route of the app: its HTTP rule alone (the budget matches GraphQL operations only).
        await fetch(url().replace('/graphql', '/health'));
        expect(store.calls[1]).toEqual(['per_ip']);
      });

    if (!server.inAdapter)
      it('decides a batch one operation at a time with batch: each', async () => {
        const { limiter } = await start({ batch: 'each' });
        const half = halfBudgetQuery();
        const answer = await post(url(), [{ query: half }, { query: half }]);
        expect(answer.body).toHaveLength(2);
        // Each on its own: the first decided runs, the second no longer fits.
        expect(answer.body.filter((one) => one.data?.books !== undefined)).toHaveLength(1);
        expect(answer.body.filter((one) => codeOf(one) === 'THROTTLED')).toHaveLength(1);
        expect(world.calls.books).toBe(1);
        expect(await left(limiter)).toBe(100 - estimateOf(half).cost);
      });

    const whole = server.inAdapter ? 'inside an adapter (always)' : 'with batch: whole';
    it(`decides a batch as one ${whole}: all or nothing, in one store call, settled once`, async () => {
      const { limiter } = await start(server.inAdapter ? {} : { batch: 'whole' });
      const half = halfBudgetQuery();
      const refused = await post(url(), [{ query: half }, { query: half }]);
      expect(refused.body.map((one) => codeOf(one))).toEqual(['THROTTLED', 'THROTTLED']);
      expect(world.calls.books).toBe(0);
      expect(await left(limiter)).toBe(100);
      world.stock = 3;
      const calls = store.calls.length;
      const small = await post(url(), [{ query: ONE }, { query: FEW }]);
      expect(small.body.map((one) => one.errors)).toEqual([undefined, undefined]);
      expect(store.calls.length - calls).toBe(1);
      const actual = actualOf(ONE, small.body[0]?.data) + actualOf(FEW, small.body[1]?.data);
      expect(small.body[1]?.extensions?.cost?.requestedQueryCost).toBe(estimateOf(FEW).cost);
      expect(small.body[1]?.extensions?.cost?.actualQueryCost).toBe(actualOf(FEW, small.body[1]?.data));
      expect(await left(limiter)).toBe(100 - actual);
      expect(store.settles).toBe(1);
      expect(world.calls.books).toBe(2);
    });

    it('answers a throttled operation with HTTP 200 when so configured, Retry-After still sent', async () => {
      await start({ throttledStatus: 200 });
      world.hits = 30;
      await post(url(), { query: MANY });
      const debt =
        actualOf(MANY, {
          search: Array.from({ length: 30 }, () => ({ title: '', author: { name: '' } })),
        }) - 100;
      expectThrottled(await post(url(), { query: ONE }), 200, (debt + estimateOf(ONE).cost) * 1000);
    });
  });
}

/** A THROTTLED answer with `status`, its retry in ms and seconds, and Retry-After. */
function expectThrottled(answer: Answer, status: number, waitMs: number): void {
  expect(answer.status).toBe(status);
  const error = answer.body.errors?.[0];
  expect(error?.extensions).toMatchObject({
    code: 'THROTTLED',
    rule: BUDGET.name,
    retryAfterMs: waitMs,
    retryAfter: Math.ceil(waitMs / 1000),
  });
  expect(error?.message).toBe(`Throttled (rule ${BUDGET.name}): retry in ${Math.ceil(waitMs / 1000)} s`);
  expect(answer.headers.get('retry-after')).toBe(String(Math.ceil(waitMs / 1000)));
  expect(answer.body.data ?? null).toBeNull();
}
