import { describe, expect, it } from 'vitest';
import type { GiveUpEvent, RetryEvent, WaitEvent } from './events.js';
import { createFetch } from './fetch.js';
import { graphqlCall } from './graphqlCall.js';
import type { ClientOptions } from './options.js';

const URL_ = 'https://api.example.com/graphql';
const post = (body: unknown) => ({ url: new URL(URL_), method: 'POST', body: JSON.stringify(body) });

describe('graphqlCall', () => {
  const call = (target: { url: URL; method: string; body?: string }, cost?: number, enabled = true) =>
    graphqlCall(enabled, target, target.body, cost);

  it('keys a call by its operation name and query text, per endpoint path', () => {
    expect(call(post({ query: '{ a }' }))).toEqual({ endpoint: '/graphql', key: '\n{ a }', cost: undefined });
    expect(
      call(post({ query: 'query A { a } query B { b }', operationName: 'B', variables: { x: 1 } }))?.key,
    ).toBe('B\nquery A { a } query B { b }');
    const get = new URL(`${URL_}?query=${encodeURIComponent('{ a }')}`);
    expect(call({ url: get, method: 'GET' })?.key).toBe('\n{ a }');
  });

  it('keys a persisted query by its id, and a batch by its operations', () => {
    const persisted = { extensions: { persistedQuery: { version: 1, sha256Hash: 'abc' } } };
    expect(call(post(persisted))?.key).toBe('\n#abc');
    expect(call(post({ documentId: 'd1', operationName: 'Q' }))?.key).toBe('Q\n#d1');
    const get = new URL(`${URL_}?extensions=${encodeURIComponent(JSON.stringify(persisted.extensions))}`);
    expect(call({ url: get, method: 'GET' })?.key).toBe('\n#abc');
    expect(call(post([{ query: '{ a }' }, { query: '{ b }' }]))?.key).toBe('\n{ a }\n\n\n{ b }');
    expect(call(post([{ query: '{ a }' }, { nothing: 1 }]))).toBeUndefined();
  });

  it('is no GraphQL call without graphql on, or for a body that holds no operation, unless given a cost', () => {
    expect(call(post({ query: '{ a }' }), undefined, false)).toBeUndefined();
    expect(call(post({ prompt: 'hi' }))).toBeUndefined();
    expect(call({ url: new URL(URL_), method: 'POST', body: 'query=x' })).toBeUndefined();
    expect(call({ url: new URL(`${URL_}?q=1`), method: 'GET' })).toBeUndefined();
    expect(call({ url: new URL(URL_), method: 'POST', body: 'not json' }, 5, false)).toEqual({
      endpoint: '/graphql',
      key: undefined,
      cost: 5,
    });
  });

  it('a cost that is not a number >= 0 is a TypeError', () => {
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY, '5' as unknown as number])
      expect(() => call(post({ query: '{ a }' }), bad)).toThrow(TypeError);
  });
});

/**
 * A GraphQL server as a fetch, on a clock the client's waits move: a Shopify-style bucket (`max` points,
 * `rate` a second), each query text priced from `costs`, THROTTLED (with `status`) when the bucket is short.
 */
class FakeServer {
  now = 1_000_000;
  available: number;
  at = this.now;
  readonly bodies: string[] = [];
  readonly answers: string[] = [];

  constructor(
    readonly max: number,
    readonly rate: number,
    readonly costs: Readonly<Record<string, number>>,
    readonly status: 200 | 429 = 200,
  ) {
    this.available = max;
  }

  readonly fetch = async (_input: unknown, init?: RequestInit): Promise<Response> => {
    const body = String(init?.body);
    this.bodies.push(body);
    this.available = Math.min(this.max, this.available + ((this.now - this.at) / 1000) * this.rate);
    this.at = this.now;
    const cost = this.costs[(JSON.parse(body) as { query: string }).query] ?? 1;
    const throttleStatus = {
      maximumAvailable: this.max,
      currentlyAvailable: this.available,
      restoreRate: this.rate,
    };
    if (this.available < cost) {
      this.answers.push('THROTTLED');
      const retryAfterMs = Math.ceil(((cost - this.available) / this.rate) * 1000);
      const refused = { errors: [{ message: 'Throttled', extensions: { code: 'THROTTLED', retryAfterMs } }] };
      return json(
        { ...refused, extensions: { cost: { requestedQueryCost: cost, throttleStatus } } },
        this.status,
      );
    }
    this.available -= cost;
    this.answers.push('ok');
    const cost_ = { requestedQueryCost: cost, actualQueryCost: cost, throttleStatus };
    return json(
      {
        data: { ok: true },
        extensions: {
          cost: { ...cost_, throttleStatus: { ...throttleStatus, currentlyAvailable: this.available } },
        },
      },
      200,
    );
  };

  readonly sleep = async (ms: number): Promise<void> => {
    this.now += ms;
  };

  /** A client of this server with `graphql` on, no jitter, and every event recorded. */
  client(options: ClientOptions = {}) {
    const events = { waits: [] as WaitEvent[], retries: [] as RetryEvent[], giveUps: [] as GiveUpEvent[] };
    const fetch = createFetch({
      fetch: this.fetch,
      now: () => this.now,
      sleep: this.sleep,
      jitterMs: 0,
      graphql: true,
      events: {
        wait: (event) => events.waits.push(event),
        retry: (event) => events.retries.push(event),
        giveUp: (event) => events.giveUps.push(event),
      },
      ...options,
    });
    return { fetch, events };
  }
}

function json(body: unknown, status: number): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

const query = (text: string, extra: object = {}) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ query: text }),
  ...extra,
});

describe('createFetch with graphql: one call at a time against a cost budget', () => {
  it('waits for the points a known query costs, so that the server throttles nothing', async () => {
    const server = new FakeServer(100, 10, { '{ big }': 30 });
    const { fetch, events } = server.client();
    for (let i = 0; i < 5; i++)
      expect(await (await fetch(URL_, query('{ big }'))).json()).toEqual({
        data: { ok: true },
        extensions: expect.any(Object),
      });
    expect(server.answers).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
    // 100 - 3 * 30 = 10 left: the 4th waits for 20 points at 10 a second, the 5th for 30.
    expect(events.waits.map((event) => [event.policy, event.ms])).toEqual([
      ['graphql', 2000],
      ['graphql', 3000],
    ]);
  });

  it('a cost given with a call paces its first call, and is not sent; without it the first call goes blind', async () => {
    const costs = { '{ mid }': 50, '{ big }': 60 };
    const server = new FakeServer(100, 10, costs);
    const seen: RequestInit[] = [];
    const { fetch, events } = server.client({
      fetch: (input, init) => {
        seen.push(init ?? {});
        return server.fetch(input, init);
      },
    });
    await fetch(URL_, query('{ mid }')); // 50 left
    expect(await fetch(URL_, query('{ big }', { cost: 60 }))).toMatchObject({ status: 200 });
    expect(events.waits.map((event) => [event.policy, event.ms])).toEqual([['graphql', 1000]]);
    expect(seen.every((init) => !('cost' in init))).toBe(true);
    expect(server.answers).toEqual(['ok', 'ok']);

    const blind = new FakeServer(100, 10, costs);
    const client = blind.client({ maxAttempts: 1 });
    await client.fetch(URL_, query('{ mid }'));
    await client.fetch(URL_, query('{ big }'));
    expect(blind.answers).toEqual(['ok', 'THROTTLED']);
  });

  it.each([200, 429] as const)(
    'a THROTTLED POST (status %i) is sent again after its retryAfterMs: refused before it ran',
    async (status) => {
      const server = new FakeServer(100, 10, { '{ big }': 80 }, status);
      const other = server.client().fetch;
      await other(URL_, query('{ big }')); // another client spends the budget: 20 left
      const { fetch, events } = server.client();
      const answer = await fetch(URL_, query('{ big }'));
      expect(answer.status).toBe(200);
      expect(await answer.json()).toMatchObject({ data: { ok: true } });
      expect(server.answers).toEqual(['ok', 'THROTTLED', 'ok']);
      expect(events.retries).toEqual([
        {
          origin: 'https://api.example.com',
          method: 'POST',
          status,
          attempt: 1,
          code: 'THROTTLED',
          delayMs: 6000,
        },
      ]);
    },
  );

  it.each([
    [{ maxAttempts: 1 }, 'max_attempts'],
    [{}, 'wait_too_long'], // 80 points missing at 1 a second: past maxWaitMs
  ] as const)('a THROTTLED answer goes back, its body unread (%j: %s)', async (options, reason) => {
    const server = new FakeServer(100, 1, { '{ big }': 90 });
    await server.client().fetch(URL_, query('{ big }'));
    const { fetch, events } = server.client(options);
    const answer = await fetch(URL_, query('{ big }'));
    expect(answer.bodyUsed).toBe(false);
    expect((await answer.json()).errors[0].extensions.code).toBe('THROTTLED');
    expect(events.giveUps).toEqual([
      {
        origin: 'https://api.example.com',
        method: 'POST',
        status: 200,
        code: 'THROTTLED',
        attempt: 1,
        reason,
      },
    ]);
  });

  it('a THROTTLED error that says it can never fit (retryAfterMs: null) goes back at once', async () => {
    const never = { errors: [{ message: 'T', extensions: { code: 'THROTTLED', retryAfterMs: null } }] };
    const server = new FakeServer(100, 1, {});
    const { fetch, events } = server.client({ fetch: async () => json(never, 429) });
    expect((await fetch(URL_, query('{ a }'))).status).toBe(429);
    expect(events.retries).toEqual([]);
    expect(events.giveUps).toMatchObject([{ code: 'THROTTLED', attempt: 1, reason: 'wait_too_long' }]);
  });

  it('without graphql, a THROTTLED 200 is an answer like any other', async () => {
    const server = new FakeServer(100, 1, { '{ big }': 90 });
    await server.client().fetch(URL_, query('{ big }'));
    const { fetch, events } = server.client({ graphql: false });
    expect((await fetch(URL_, query('{ big }'))).status).toBe(200);
    expect(server.answers).toEqual(['ok', 'THROTTLED']);
    expect(events.retries).toEqual([]);
  });

  it('a THROTTLED error beside data (executed in part) is not sent again', async () => {
    const partial = {
      data: { a: 1 },
      errors: [{ message: 'T', extensions: { code: 'THROTTLED', retryAfterMs: 5 } }],
    };
    let calls = 0;
    const fetch = createFetch({
      graphql: true,
      fetch: async () => {
        calls++;
        return json(partial, 200);
      },
    });
    expect(await (await fetch(URL_, query('{ a }'))).json()).toEqual(partial);
    expect(calls).toBe(1);
  });

  it('a cost that is not a number rejects the call with a TypeError, sending nothing', async () => {
    const server = new FakeServer(100, 1, {});
    await expect(server.client().fetch(URL_, query('{ a }', { cost: -5 }))).rejects.toThrow(TypeError);
    expect(server.bodies).toEqual([]);
  });
});

describe('createFetch with graphql: calls at once', () => {
  it('a query never seen goes alone; the others of its text wait for its answer to say its cost', async () => {
    const order: string[] = [];
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const body = {
      data: {},
      extensions: {
        cost: {
          requestedQueryCost: 1,
          throttleStatus: { maximumAvailable: 10, currentlyAvailable: 9, restoreRate: 1 },
        },
      },
    };
    let n = 0;
    const fetch = createFetch({
      graphql: true,
      fetch: async () => {
        const mine = ++n;
        order.push(`sent ${mine}`);
        if (mine === 1) await held;
        order.push(`answered ${mine}`);
        return json(body, 200);
      },
    });
    const calls = [fetch(URL_, query('{ a }')), fetch(URL_, query('{ a }'))];
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(order).toEqual(['sent 1']);
    release();
    await Promise.all(calls);
    expect(order).toEqual(['sent 1', 'answered 1', 'sent 2', 'answered 2']);
  });
});
