/** @sluice/client against real Sluice servers on Fastify, Express and Koa (MemoryStore), over loopback HTTP. */
import {
  type ClientEvents,
  type ClientOptions,
  createFetch,
  type GiveUpEvent,
  type RetryEvent,
} from '@sluice/client';
import type { RuleSpec } from '@sluice/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  FRAMEWORKS,
  type Framework,
  type LimiterSetup,
  type OrderEcho,
  perIp,
  startServer,
  type TestServer,
} from './servers.js';
import { VirtualTime } from './virtualTime.js';

/** A window boundary: fixed windows of 10 s and 60 s both start here. */
const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);

/** Records every event the client emits. */
class Recorder {
  readonly retries: RetryEvent[] = [];
  readonly giveUps: GiveUpEvent[] = [];
  readonly exhausted: GiveUpEvent[] = [];
  readonly waits: { reason: string; ms: number }[] = [];
  readonly events: ClientEvents = {
    retry: (event) => this.retries.push(event),
    giveUp: (event) => this.giveUps.push(event),
    budgetExhausted: (event) => this.exhausted.push(event),
    wait: (event) => this.waits.push({ reason: event.reason, ms: event.ms }),
  };
}

describe.each(FRAMEWORKS.map((framework) => [framework] as const))(
  '@sluice/client against %s',
  (framework: Framework) => {
    let server: TestServer | undefined;
    afterEach(async () => {
      await server?.close();
      server = undefined;
    });

    /** A server on `time`'s clock and a client sharing it. */
    async function setUp(rule: RuleSpec, options: ClientOptions = {}, time = new VirtualTime(T0)) {
      const setup: LimiterSetup = { rules: { domain: 'client', rules: [rule] }, clock: time.clock };
      server = await startServer(framework, setup);
      const recorder = new Recorder();
      const client = createFetch({ now: time.clock, sleep: time.sleep, events: recorder.events, ...options });
      return { url: server.url, hits: server.hits, time, recorder, client };
    }

    it('waits Retry-After plus jitter after a 429, then gets through', async () => {
      const { url, hits, time, recorder, client } = await setUp(perIp(2, '10s'), {
        pacing: false,
        random: () => 0.25,
        attemptHeader: 'x-attempt',
      });
      expect((await client(`${url}/items`)).status).toBe(200);
      expect((await client(`${url}/items`)).status).toBe(200);
      const third = await client(`${url}/items`);
      expect(third.status).toBe(200);
      expect(await third.json()).toEqual({ ok: true });
      // Retry-After: 10, plus a quarter of the 1000 ms jitter.
      expect(time.waits).toEqual([10_250]);
      expect(recorder.retries).toMatchObject([
        { status: 429, attempt: 1, delayMs: 10_250, method: 'GET', origin: url },
      ]);
      expect(hits.map((hit) => hit.attempt)).toEqual([undefined, undefined, undefined, '2']);
    });

    it('waits only what is left of the window', async () => {
      const { url, time, client } = await setUp(perIp(1, '10s'), { pacing: false, random: () => 0 });
      await client(`${url}/items`);
      time.now += 4000;
      expect((await client(`${url}/items`)).status).toBe(200);
      expect(time.waits).toEqual([6000]);
    });

    it('gives a 429 back at once when its wait is longer than maxWaitMs', async () => {
      const { url, hits, time, recorder, client } = await setUp(perIp(1, '60s'), {
        pacing: false,
        maxWaitMs: 5000,
      });
      await client(`${url}/items`);
      const refused = await client(`${url}/items`);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('60');
      expect(recorder.giveUps).toMatchObject([{ status: 429, attempt: 1, reason: 'wait_too_long' }]);
      expect(time.waits).toEqual([]);
      expect(hits).toHaveLength(2);
    });

    it('stops after maxAttempts, and gives the last 429 back', async () => {
      // A sleep that lets no time pass: every retry is refused again.
      const frozen = Object.assign(new VirtualTime(T0), { sleep: async () => {} });
      const { url, hits, recorder, client } = await setUp(
        perIp(1, '60s'),
        { pacing: false, maxAttempts: 3, maxWaitMs: 120_000 },
        frozen,
      );
      await client(`${url}/items`);
      const refused = await client(`${url}/items`);
      expect(refused.status).toBe(429);
      expect(recorder.retries.map((event) => event.attempt)).toEqual([1, 2]);
      expect(recorder.giveUps).toMatchObject([{ attempt: 3, reason: 'max_attempts' }]);
      expect(hits).toHaveLength(4);
    });

    it('spends the retry budget, then gives refusals back at once', async () => {
      const frozen = Object.assign(new VirtualTime(T0), { sleep: async () => {} });
      const { url, hits, recorder, client } = await setUp(
        perIp(1, '60s'),
        { pacing: false, maxAttempts: 10, maxWaitMs: 120_000, retryBudget: { ratio: 0, reserve: 2 } },
        frozen,
      );
      await client(`${url}/items`);
      expect((await client(`${url}/items`)).status).toBe(429);
      expect((await client(`${url}/items`)).status).toBe(429);
      // 1 allowed; then 1 + the 2 retries of the reserve; then 1 with no retry at all.
      expect(hits).toHaveLength(5);
      expect(recorder.retries).toHaveLength(2);
      expect(recorder.exhausted).toMatchObject([
        { status: 429, attempt: 3, reason: 'budget_exhausted' },
        { status: 429, attempt: 1, reason: 'budget_exhausted' },
      ]);
    });

    it('paces by the RateLimit fields, so that it never meets the 429', async () => {
      const { url, hits, time, recorder, client } = await setUp(perIp(2, '10s'), { random: () => 0.5 });
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await client(`${url}/items`)).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200]);
      expect(hits).toHaveLength(5); // no refused attempt
      expect(recorder.retries).toEqual([]);
      // The third waits for the reset (+10 s) plus half the 1000 ms jitter; the fourth is spread over what
      // its answer says is left (1 until +20.5 s: t=10, rounded up); the fifth, with that window's 2 spent,
      // waits for the reset the fourth's answer gives (t=5: +20.25 s) plus half the jitter.
      expect(time.waits).toEqual([10_500, 4_750, 5_500]);
      expect(recorder.waits.every((wait) => wait.reason === 'pacing')).toBe(true);
    });

    it('sends anyway when an injected clock does not move with the waits', async () => {
      const frozen = Object.assign(new VirtualTime(T0), { sleep: async () => {} });
      const { url, hits, client } = await setUp(perIp(1, '10s'), { maxAttempts: 1 }, frozen);
      await client(`${url}/items`);
      // The policy is spent and its reset never comes: after its rounds of waiting, the request goes.
      expect((await client(`${url}/items`)).status).toBe(429);
      expect(hits).toHaveLength(2);
    });

    it('does not retry a POST without an Idempotency-Key', async () => {
      const { url, hits, recorder, client } = await setUp(perIp(1, '10s'), { pacing: false });
      await client(`${url}/items`);
      const refused = await client(`${url}/orders`, { method: 'POST', body: '{"n":1}' });
      expect(refused.status).toBe(429);
      expect(recorder.giveUps).toMatchObject([{ method: 'POST', reason: 'not_idempotent' }]);
      expect(hits.filter((hit) => hit.method === 'POST')).toHaveLength(1);
    });

    it('retries a POST with the Idempotency-Key it adds, the same key and body on every attempt', async () => {
      const { url, hits, client } = await setUp(perIp(1, '10s'), { pacing: false, idempotencyKey: true });
      await client(`${url}/items`);
      const body = JSON.stringify({ order: 'a', qty: 2 });
      const response = await client(`${url}/orders`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
      });
      expect(response.status).toBe(200);
      const echo = (await response.json()) as OrderEcho;
      expect(echo.body).toEqual({ order: 'a', qty: 2 });
      const posts = hits.filter((hit) => hit.method === 'POST');
      expect(posts).toHaveLength(2);
      expect(posts[0]!.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
      expect(posts[1]!.idempotencyKey).toBe(posts[0]!.idempotencyKey);
      expect(echo.idempotencyKey).toBe(posts[0]!.idempotencyKey);
      expect(hits[0]!.idempotencyKey).toBeUndefined(); // never on a GET
    });

    it("retries a POST that carries the caller's own Idempotency-Key", async () => {
      const { url, hits, client } = await setUp(perIp(1, '10s'), { pacing: false });
      await client(`${url}/items`);
      const response = await client(`${url}/orders`, {
        method: 'POST',
        body: new TextEncoder().encode('{"x":1}'),
        headers: { 'content-type': 'application/json', 'Idempotency-Key': 'order-77' },
      });
      expect(response.status).toBe(200);
      expect(((await response.json()) as OrderEcho).body).toEqual({ x: 1 });
      expect(hits.filter((hit) => hit.method === 'POST').map((hit) => hit.idempotencyKey)).toEqual([
        'order-77',
        'order-77',
      ]);
    });

    it('does not retry a streamed body', async () => {
      const { url, hits, recorder, client } = await setUp(perIp(1, '10s'), { pacing: false });
      await client(`${url}/items`);
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"s":1}'));
          controller.close();
        },
      });
      const init = { method: 'PUT', body: stream, duplex: 'half' } as RequestInit;
      expect((await client(`${url}/orders`, init)).status).toBe(429);
      expect(recorder.giveUps).toMatchObject([{ method: 'PUT', reason: 'body_not_replayable' }]);
      expect(hits).toHaveLength(2);
    });

    it('rejects with the abort reason while waiting for a retry, and sends nothing more', async () => {
      const time = new VirtualTime(T0);
      const rule = perIp(1, '30s');
      server = await startServer(framework, {
        rules: { domain: 'client', rules: [rule] },
        clock: time.clock,
      });
      const controller = new AbortController();
      const reason = new Error('caller gave up');
      // The real timer: only the abort can end this 30-second wait within the test's time.
      const client = createFetch({
        pacing: false,
        now: time.clock,
        events: { wait: () => controller.abort(reason) },
      });
      await client(`${server.url}/items`);
      await expect(client(`${server.url}/items`, { signal: controller.signal })).rejects.toBe(reason);
      expect(server.hits).toHaveLength(2);
    });

    it('rejects with the abort reason while waiting for a pacing slot', async () => {
      const time = new VirtualTime(T0);
      server = await startServer(framework, {
        rules: { domain: 'client', rules: [perIp(1, '30s')] },
        clock: time.clock,
      });
      const controller = new AbortController();
      const waits: string[] = [];
      const client = createFetch({
        now: time.clock,
        events: {
          wait: (event) => {
            waits.push(event.reason);
            controller.abort();
          },
        },
      });
      await client(`${server.url}/items`);
      const aborted = client(`${server.url}/items`, { signal: controller.signal });
      await expect(aborted).rejects.toMatchObject({ name: 'AbortError' });
      expect(waits).toEqual(['pacing']);
      expect(server.hits).toHaveLength(1);
    });
  },
);
