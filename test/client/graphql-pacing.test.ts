/**
 * @sluice/client pacing GraphQL calls over real HTTP: GraphQL Yoga 5 on node:http, with an envelop plugin
 * written here that keeps a Shopify-style bucket of cost points per server (charge the requested cost before
 * execution, give back the difference once the actual cost is known, restore points at a rate) and answers
 * `extensions.cost` on every result, THROTTLED (200 or 429) when the bucket lacks the requested cost. A batch
 * that overdraws the bucket when sent at once goes through without one THROTTLED answer when the client paces
 * it; sent at once (pacing off), part of it is throttled. The same batch through @sluice/graphql's own Yoga
 * plugin (`useCostBudget`, a GCRA budget with `settle`, on MemoryStore) meets the same fate.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ClientOptions, createFetch, type RetryEvent, type WaitEvent } from '@sluice/client';
import { compileRules, createLimiter, MemoryStore, type RuleSpec } from '@sluice/core';
import { costDirectivesSdl, costEstimator } from '@sluice/graphql';
import { useCostBudget } from '@sluice/graphql/yoga';
import { buildSchema, type ExecutionResult } from 'graphql';
import { createGraphQLError, createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { afterEach, describe, expect, it } from 'vitest';

/** 100 points, 50 restored a second. */
const MAXIMUM = 100;
const RESTORE_RATE = 50;
/** Items a list answers at most: a call asking for more is settled below its requested cost. */
const PAGE = 5;
/** How long a list takes to resolve. */
const WORK_MS = 300;

const typeDefs = /* GraphQL */ `
  type Item {
    id: Int!
  }
  type Query {
    items(first: Int!): [Item!]!
  }
`;

/** What the server saw: operations admitted, throttled, and the resolver calls made. */
interface Counts {
  admitted: number;
  throttled: number;
  resolved: number;
}

/** A Shopify-style leaky bucket of cost points, restored continuously. */
class Bucket {
  available = MAXIMUM;
  #at = Date.now();

  refill(now: number): void {
    this.available = Math.min(MAXIMUM, this.available + ((now - this.#at) / 1000) * RESTORE_RATE);
    this.#at = now;
  }

  status(): { maximumAvailable: number; currentlyAvailable: number; restoreRate: number } {
    this.refill(Date.now());
    return {
      maximumAvailable: MAXIMUM,
      currentlyAvailable: Math.floor(this.available),
      restoreRate: RESTORE_RATE,
    };
  }
}

/** The requested cost of `items(first: N)`: one for the list, one an item asked for. */
function requestedCost(variables: Record<string, unknown> | undefined, literal: number | undefined): number {
  return 1 + Number(variables?.first ?? literal ?? 0);
}

/** The first literal `first: N` of the document, when the query writes it out. */
function literalFirst(source: string | undefined): number | undefined {
  const match = /first:\s*(\d+)/.exec(source ?? '');
  return match ? Number(match[1]) : undefined;
}

/** The envelop plugin: admission on the requested cost, settlement on the actual one, `extensions.cost`. */
function costBucket(bucket: Bucket, counts: Counts, throttledStatus: 200 | 429): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const source = args.document.loc?.source.body;
      const requested = requestedCost(args.variableValues ?? undefined, literalFirst(source));
      bucket.refill(Date.now());
      if (bucket.available < requested) {
        counts.throttled += 1;
        const retryAfterMs = Math.ceil(((requested - bucket.available) / RESTORE_RATE) * 1000);
        const http = throttledStatus === 429 ? { http: { status: 429 } } : {};
        setResultAndStopExecution({
          errors: [
            createGraphQLError('Throttled', { extensions: { code: 'THROTTLED', retryAfterMs, ...http } }),
          ],
          extensions: { cost: { requestedQueryCost: requested, throttleStatus: bucket.status() } },
        });
        return;
      }
      counts.admitted += 1;
      bucket.available -= requested;
      return {
        onExecuteDone({ result, setResult }) {
          const done = result as ExecutionResult<{ items?: unknown[] }>;
          const actual = 1 + (done.data?.items?.length ?? 0);
          bucket.available += requested - actual;
          const cost = {
            requestedQueryCost: requested,
            actualQueryCost: actual,
            throttleStatus: bucket.status(),
          };
          setResult({ ...done, extensions: { ...done.extensions, cost } });
        },
      };
    },
  };
}

interface Started {
  readonly url: string;
  readonly counts: Counts;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** Yoga on node:http, on a free loopback port, its bucket full. */
async function startYoga(throttledStatus: 200 | 429 = 200): Promise<Started> {
  const counts: Counts = { admitted: 0, throttled: 0, resolved: 0 };
  const resolvers = {
    Query: {
      // Slow enough that a batch sent at once is charged in full before any call is settled.
      items: async (_: unknown, { first }: { first: number }) => {
        counts.resolved += 1;
        await new Promise((resolve) => setTimeout(resolve, WORK_MS));
        return Array.from({ length: Math.min(first, PAGE) }, (_item, id) => ({ id }));
      },
    },
  };
  const yoga = createYoga({
    schema: createSchema({ typeDefs, resolvers }),
    plugins: [costBucket(new Bucket(), counts, throttledStatus)],
    logging: false,
  });
  const server = createServer(yoga);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`, counts };
}

const ITEMS = 'query Items($first: Int!) { items(first: $first) { id } }';
/** 12 calls of 20 requested points: 240 against a bucket of 100. */
const BATCH = 12;
const FIRST = 19;

/** A POST of `query` as JSON, without an Idempotency-Key: a THROTTLED one may be sent again all the same. */
function call(query: string, variables?: object, extra: object = {}) {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
    ...extra,
  };
}

/**
 * A client recording its events and the codes of the answers the server gave (every attempt); with `apiKey`,
 * each attempt carries it in `x-api-key`.
 */
function client(options: ClientOptions, apiKey?: string) {
  const codes: string[] = [];
  const waits: WaitEvent[] = [];
  const retries: RetryEvent[] = [];
  const fetch = createFetch({
    graphql: true,
    jitterMs: 0,
    events: { wait: (event) => waits.push(event), retry: (event) => retries.push(event) },
    fetch: async (input, init) => {
      const headers = new Headers(init?.headers);
      if (apiKey !== undefined) headers.set('x-api-key', apiKey);
      const response = await globalThis.fetch(input, { ...init, headers });
      const body = await response.clone().json();
      codes.push(body.errors?.[0]?.extensions?.code ?? String(response.status));
      return response;
    },
    ...options,
  });
  return { fetch, codes, waits, retries };
}

/** Sends the batch at once; answers what the caller read from each response. */
async function sendBatch(fetch: ReturnType<typeof createFetch>, url: string, query = ITEMS) {
  return Promise.all(
    Array.from({ length: BATCH }, () =>
      fetch(url, call(query, { first: FIRST })).then(async (response) => ({
        status: response.status,
        body: await response.json(),
      })),
    ),
  );
}

describe('@sluice/client paces GraphQL calls by extensions.cost (Yoga, real HTTP)', () => {
  it('a batch that fits the budget only when paced: all answered, zero THROTTLED', async () => {
    const { url, counts } = await startYoga();
    const paced = client({ maxAttempts: 1 });
    const started = Date.now();
    const answers = await sendBatch(paced.fetch, url);
    const ms = Date.now() - started;
    expect(answers.map((answer) => answer.status)).toEqual(Array(BATCH).fill(200));
    for (const { body } of answers) expect(body.data.items).toHaveLength(PAGE);
    expect(paced.codes).toEqual(Array(BATCH).fill('200'));
    expect(counts).toEqual({ admitted: BATCH, throttled: 0, resolved: BATCH });
    // The client waited for points: the batch asks 240, the bucket holds 100 (each call settles at 6).
    expect(paced.waits.filter((event) => event.policy === 'graphql').length).toBeGreaterThan(0);
    expect(ms).toBeGreaterThanOrEqual(400);
  }, 30_000);

  it.each([200, 429] as const)(
    'the same batch unpaced overdraws the bucket: part of it THROTTLED (status %i), given back unread',
    async (status) => {
      const { url, counts } = await startYoga(status);
      const unpaced = client({ pacing: false, maxAttempts: 1 });
      const answers = await sendBatch(unpaced.fetch, url);
      const refused = answers.filter((answer) => answer.body.errors?.[0]?.extensions?.code === 'THROTTLED');
      // 100 points admit 5 calls of 20, and the rest are refused (7 of 12, typically); on a loaded machine the
      // batch may arrive spread out enough for points restored and settled meanwhile to admit a few more.
      expect(refused.length).toBeGreaterThan(0);
      expect(counts.throttled).toBe(refused.length);
      expect(counts.resolved).toBe(BATCH - refused.length);
      expect(new Set(refused.map((answer) => answer.status))).toEqual(new Set([status]));
    },
    30_000,
  );

  it("a THROTTLED call (another client spent the budget) is sent again after the error's retryAfterMs", async () => {
    const { url, counts } = await startYoga(429);
    const paced = client({});
    expect((await paced.fetch(url, call(ITEMS, { first: FIRST }))).status).toBe(200);
    // Another client, out of sight of this one, spends the budget: 5 calls of 20 at once, running.
    const other = Array.from({ length: 5 }, () => globalThis.fetch(url, call(ITEMS, { first: FIRST })));
    while (counts.admitted + counts.throttled < 6) await new Promise((resolve) => setTimeout(resolve, 5));
    const answer = await paced.fetch(url, call(ITEMS, { first: FIRST }));
    expect(answer.status).toBe(200);
    expect((await answer.json()).data.items).toHaveLength(PAGE);
    expect(paced.codes).toEqual(['200', 'THROTTLED', '200']);
    expect(paced.retries).toEqual([expect.objectContaining({ status: 429, code: 'THROTTLED', attempt: 1 })]);
    expect(paced.retries[0]?.delayMs).toBeGreaterThan(0);
    expect(counts.throttled).toBeGreaterThanOrEqual(1);
    await Promise.all(other);
  }, 30_000);

  it('queries never seen, each given its cost per call: paced from the first, zero THROTTLED; without it, some are', async () => {
    // Each text different (its own literal), so that no answer teaches the cost of another.
    const texts = Array.from({ length: 8 }, (_, i) => `{ items(first: ${20 + i}) { id } }`);
    const { url, counts } = await startYoga();
    const withCost = client({ maxAttempts: 1 });
    await withCost.fetch(url, call('{ items(first: 0) { id } }')); // learns the budget
    await Promise.all(texts.map((text, i) => withCost.fetch(url, call(text, undefined, { cost: 21 + i }))));
    expect(counts.throttled).toBe(0);
    expect(withCost.codes).toEqual(Array(texts.length + 1).fill('200'));

    const blind = client({ maxAttempts: 1 });
    const other = await startYoga();
    await blind.fetch(other.url, call('{ items(first: 0) { id } }'));
    await Promise.all(texts.map((text) => blind.fetch(other.url, call(text))));
    expect(other.counts.throttled).toBeGreaterThan(0);
  }, 30_000);
});

/** The same schema annotated with the IBM cost directives, priced by @sluice/graphql's estimator. */
const ANNOTATED = `${costDirectivesSdl}
type Item {
  id: Int!
}
type Query {
  items(first: Int!): [Item!]! @listSize(slicingArguments: ["first"])
}
`;

/** @sluice/graphql's budget: 100 points, 50 regained a second, per API key; the estimate reserved, then settled. */
const POINTS: RuleSpec = {
  name: 'graphql_points',
  key: ['api_key'],
  algorithm: 'gcra',
  limit: { requests: 100, per: '2s' },
  cost: { descriptor: 'graphql_cost', max: 1000 },
  settle: true,
};

describe("@sluice/client through @sluice/graphql's Yoga plugin (real HTTP)", () => {
  /** Yoga with useCostBudget on a MemoryStore; answers its URL and its resolver calls. */
  async function startBudgeted(): Promise<{ url: string; resolved: () => number }> {
    let resolved = 0;
    const schema = buildSchema(ANNOTATED);
    const yoga = createYoga({
      schema: createSchema({
        typeDefs: ANNOTATED,
        resolvers: {
          Query: {
            items: async (_: unknown, { first }: { first: number }) => {
              resolved += 1;
              await new Promise((resolve) => setTimeout(resolve, WORK_MS));
              return Array.from({ length: Math.min(first, PAGE) }, (_item, id) => ({ id }));
            },
          },
        },
      }),
      logging: false,
      plugins: [
        useCostBudget({
          estimator: costEstimator(schema),
          limiter: createLimiter({ rules: compileRules({ rules: [POINTS] }), store: new MemoryStore() }),
          descriptors: ({ request }) => ({ api_key: request.headers.get('x-api-key') ?? undefined }),
        }),
      ],
    });
    const server = createServer(yoga);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
    return { url, resolved: () => resolved };
  }

  it('a batch that fits the budget only when paced: zero THROTTLED paced, THROTTLED unpaced', async () => {
    const paced = await startBudgeted();
    const pacedClient = client({ maxAttempts: 1 }, 'k-batch');
    const answers = await sendBatch(pacedClient.fetch, paced.url);
    expect(answers.map((answer) => answer.status)).toEqual(Array(BATCH).fill(200));
    for (const { body } of answers) {
      expect(body.data.items).toHaveLength(PAGE);
      expect(body.extensions.cost.throttleStatus).toMatchObject({ maximumAvailable: 100, restoreRate: 50 });
    }
    expect(pacedClient.codes).toEqual(Array(BATCH).fill('200'));
    expect(paced.resolved()).toBe(BATCH);
    expect(pacedClient.waits.filter((event) => event.policy === 'graphql').length).toBeGreaterThan(0);

    const unpaced = await startBudgeted();
    const blind = client({ pacing: false, maxAttempts: 1 }, 'k-batch');
    const sent = await sendBatch(blind.fetch, unpaced.url);
    const refused = sent.filter((answer) => answer.body.errors?.[0]?.extensions?.code === 'THROTTLED');
    expect(refused.length).toBeGreaterThan(0);
    expect(new Set(refused.map((answer) => answer.status))).toEqual(new Set([429]));
    expect(unpaced.resolved()).toBe(BATCH - refused.length);
  }, 30_000);
});
