/**
 * What the GraphQL server tests share: one schema annotated with the IBM cost directives, resolvers that count
 * their calls, the budget rules, the three stores, and a client over real HTTP (fetch).
 */
import {
  compileRules,
  createLimiter,
  type Limiter,
  MemoryStore,
  type RuleSpec,
  type Store,
} from '@sluice/core';
import type { Lease } from '@sluice/core/store';
import {
  type CostEstimate,
  type CostEstimator,
  costDirectivesSdl,
  costEstimator,
  type GraphqlHooks,
  graphqlHooks,
} from '@sluice/graphql';
import { PostgresStore } from '@sluice/postgres';
import { RedisStore } from '@sluice/redis';
import { buildSchema, type GraphQLSchema } from 'graphql';
import type { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { CountingStore } from '../support/counting-store.js';
import { postgresSuite, randomTablePrefix } from '../support/postgres.js';
import { randomPrefix, redisSuite } from '../support/redis.js';

export const SDL = `${costDirectivesSdl}
type Query {
  books(first: Int!): [Book!]! @listSize(slicingArguments: ["first"])
  search(term: String!): [Book!]! @listSize(assumedSize: 2)
  expensive: Int @cost(weight: "500")
}
type Mutation {
  addBook(title: String!): Book @cost(weight: "10")
}
type Book {
  id: ID!
  title: String!
  author: Author @cost(weight: "2")
  related: [Book!]! @listSize(assumedSize: 1)
}
type Author {
  name: String!
}
`;

/** The schema (no resolvers: each server is given {@link resolvers}). */
export const schema: GraphQLSchema = buildSchema(SDL);
/** Depth 8 at most: the tests' oversized query is deeper. */
export const estimator: CostEstimator = costEstimator(schema, { maxDepth: 8 });

/** The budget: 100 points, regained at 1 point a second, per API key; the estimate reserved, then settled. */
export const BUDGET: RuleSpec = {
  name: 'graphql_points',
  match: { graphql_type: ['query', 'mutation'] },
  key: ['api_key'],
  algorithm: 'gcra',
  limit: { requests: 100, per: '100s' },
  cost: { descriptor: 'graphql_cost', max: 1000 },
  settle: true,
};
/** An HTTP rule beside it: requests per client address (decided in the same store call inside an adapter). */
export const PER_IP: RuleSpec = { name: 'per_ip', key: ['ip'], limit: { requests: 1000, per: '1m' } };
/** The GraphQL route's own rule, inside an adapter (decided with the two above, after the body is parsed). */
export const ROUTE_RULE: RuleSpec = {
  name: 'graphql_route',
  key: ['ip'],
  limit: { requests: 500, per: '1m' },
};
export const MAX_COST = 300;

/** A standalone limiter on the budget. */
export function budgetLimiter(store: Store, clock: () => number): Limiter {
  return createLimiter({ rules: compileRules({ domain: 'gql', rules: [BUDGET] }), store, clock });
}

/** The budget options a test's server is given: the estimator, the maximum, and what the test sets. */
export function budgetOptions(given: { batch?: 'each' | 'whole'; throttledStatus?: 429 | 200 }) {
  return {
    estimator,
    maxCost: MAX_COST,
    ...(given.batch && { batch: given.batch }),
    ...(given.throttledStatus && { throttledStatus: given.throttledStatus }),
  };
}

/** An adapter's options: the budget and the HTTP rule, the store and clock of the test, the hooks' descriptors. */
export function adapterOptions(hooks: GraphqlHooks, given: { store: Store; clock: () => number }) {
  return {
    rules: { domain: 'gql', rules: [BUDGET, PER_IP] },
    store: given.store,
    clock: given.clock,
    descriptors: hooks.descriptors,
  };
}

/** The hooks an adapter is given, with the budget's options. */
export function budgetHooks(given: { throttledStatus?: 429 | 200 }): GraphqlHooks {
  const { batch: _batch, estimator: costs, ...options } = budgetOptions(given);
  return graphqlHooks(costs, options);
}

/** Resolver calls by root field, and what the resolvers return. */
export const world = {
  calls: { books: 0, search: 0, expensive: 0, addBook: 0 },
  /** Books that exist: `books(first: n)` returns at most this many. */
  stock: 100,
  /** Books `search` finds (its estimate assumes 2). */
  hits: 2,
  reset(): void {
    this.calls = { books: 0, search: 0, expensive: 0, addBook: 0 };
    this.stock = 100;
    this.hits = 2;
  },
  total(): number {
    return Object.values(this.calls).reduce((sum, n) => sum + n, 0);
  },
};

function book(i: number) {
  return { id: String(i), title: `Book ${i}`, author: { name: `Author ${i}` }, related: [] };
}

/** Resolvers in the `{Query, Mutation}` shape all three servers take. */
export const resolvers = {
  Query: {
    books: (_: unknown, { first }: { first: number }) => {
      world.calls.books += 1;
      return Array.from({ length: Math.min(first, world.stock) }, (_x, i) => book(i));
    },
    search: () => {
      world.calls.search += 1;
      return Array.from({ length: world.hits }, (_x, i) => book(i));
    },
    expensive: () => {
      world.calls.expensive += 1;
      return 1;
    },
  },
  Mutation: {
    addBook: (_: unknown, { title }: { title: string }) => {
      world.calls.addBook += 1;
      return { ...book(0), title };
    },
  },
};

/** The estimate of a query, as the plugins price it. */
export function estimateOf(query: string, variables?: Record<string, unknown>): CostEstimate {
  const estimate = estimator.estimate({ query, variables });
  if (!estimate.ok) throw new Error(estimate.errors.map(String).join('; '));
  return estimate;
}

/** The actual cost of a result's data, as the plugins settle it. */
export function actualOf(query: string, data: unknown, variables?: Record<string, unknown>): number {
  return estimator.actual(estimateOf(query, variables), variables ?? null, data);
}

/** A store that counts its evaluate calls and keeps the rules each was asked about. */
export class EvaluationCounter extends CountingStore {
  readonly calls: string[][] = [];
  settles = 0;
  override evaluate: Store['evaluate'] = (checks, now) => {
    this.calls.push(checks.map((check) => check.rule));
    return this.inner.evaluate(checks, now);
  };
  override async release(leases: readonly Lease[], now: number): Promise<void> {
    if (leases.some((lease) => lease.refund !== undefined || lease.owed !== undefined)) this.settles += 1;
    await super.release(leases, now);
  }
}

/** The three stores, each made fresh (its own keys) for a test. */
export interface StoreKind {
  readonly name: string;
  make(): Store;
}

/**
 * The three stores of a test file: registers its private Redis and PostgreSQL (one of each per file, shared by
 * its tests) and answers the store kinds, each store made with its own keys.
 */
export function storeSuites(): readonly StoreKind[] {
  const servers = { redis: redisSuite(), postgres: postgresSuite() };
  let shared: pg.Pool | undefined;
  beforeAll(() => {
    shared = new pg.Pool({ connectionString: servers.postgres.server.url, max: 4 });
  });
  afterAll(() => shared?.end());
  return storeKinds(
    () => servers.redis.client,
    () => shared!,
  );
}

function storeKinds(redis: () => Redis, pool: () => pg.Pool): readonly StoreKind[] {
  return [
    { name: 'MemoryStore', make: () => new MemoryStore() },
    {
      name: 'RedisStore',
      make: () => new RedisStore({ client: redis(), prefix: randomPrefix('gql'), timeoutMs: 5000 }),
    },
    {
      name: 'PostgresStore',
      make: () =>
        new PostgresStore({
          pool: pool(),
          tablePrefix: randomTablePrefix('gql'),
          createTable: true,
          // The tests' clock is the limiter's: the store decides on it, not on the database's.
          clock: 'app',
          sweepEveryMs: false,
          timeoutMs: 5000,
        }),
    },
  ];
}

/** One GraphQL response over HTTP. */
export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: GraphqlBody & GraphqlBody[];
}

/** A GraphQL response body as the tests read it. */
export interface GraphqlBody {
  readonly data?: Record<string, unknown> | null;
  readonly errors?: readonly { message: string; extensions?: Record<string, unknown> }[];
  readonly extensions?: { cost?: CostBody; [name: string]: unknown };
}

export interface CostBody {
  readonly requestedQueryCost: number;
  readonly actualQueryCost: number | null;
  readonly throttleStatus?: { maximumAvailable: number; currentlyAvailable: number; restoreRate: number };
}

/** POSTs a GraphQL body (an operation, or an array: a batch) as `key`'s client. */
export async function post(
  url: string,
  body: unknown,
  key = 'key-a',
  headers: Record<string, string> = {},
): Promise<Answer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key, ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${response.status}: not JSON: ${text.slice(0, 300)}`);
  }
  return { status: response.status, headers: response.headers, body: parsed as Answer['body'] };
}

/** The first error's extensions.code of a response. */
export const codeOf = (body: GraphqlBody): unknown => body.errors?.[0]?.extensions?.code;
