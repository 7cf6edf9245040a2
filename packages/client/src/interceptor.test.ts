/** The undici interceptor against a real Sluice server (Fastify, MemoryStore) through undici's own Agent. */
import type { RuleSpec } from '@sluice/core';
import { Agent, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { type OrderEcho, perIp, startServer, type TestServer } from '../../../test/client/servers.js';
import { VirtualTime } from '../../../test/client/virtualTime.js';
import type { GiveUpEvent, RetryEvent } from './events.js';
import { type InterceptorOptions, sluiceInterceptor } from './interceptor.js';

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);
describe('sluiceInterceptor', () => {
  let server: TestServer | undefined;
  let agent: Agent | undefined;
  afterEach(async () => {
    await agent?.close();
    await server?.close();
    [agent, server] = [undefined, undefined];
  });

  async function setUp(rule: RuleSpec, options: InterceptorOptions = {}, time = new VirtualTime(T0)) {
    server = await startServer('fastify', { rules: { domain: 'undici', rules: [rule] }, clock: time.clock });
    const retries: RetryEvent[] = [];
    const giveUps: GiveUpEvent[] = [];
    agent = new Agent();
    const dispatcher = agent.compose(
      sluiceInterceptor({
        now: time.clock,
        sleep: time.sleep,
        events: { retry: (event) => retries.push(event), giveUp: (event) => giveUps.push(event) },
        ...options,
      }),
    );
    return { url: server.url, hits: server.hits, time, retries, giveUps, dispatcher };
  }

  it('retries a 429 after Retry-After plus jitter; the handler sees only the last answer', async () => {
    const { url, hits, time, retries, dispatcher } = await setUp(perIp(1, '10s'), {
      pacing: false,
      random: () => 0.5,
      attemptHeader: 'x-attempt',
    });
    expect((await request(`${url}/items`, { dispatcher })).statusCode).toBe(200);
    const second = await request(`${url}/items`, { dispatcher });
    expect(second.statusCode).toBe(200);
    expect(await second.body.json()).toEqual({ ok: true });
    expect(time.waits).toEqual([10_500]);
    expect(retries).toMatchObject([{ status: 429, attempt: 1, delayMs: 10_500 }]);
    expect(hits.map((hit) => hit.attempt)).toEqual([undefined, undefined, '2']);
  });

  it('gives the 429 to the handler when it may not retry: after maxAttempts', async () => {
    const frozen = Object.assign(new VirtualTime(T0), { sleep: async () => {} });
    const { url, hits, giveUps, dispatcher } = await setUp(
      perIp(1, '60s'),
      { pacing: false, maxAttempts: 2, maxWaitMs: 120_000 },
      frozen,
    );
    await (await request(`${url}/items`, { dispatcher })).body.dump();
    const refused = await request(`${url}/items`, { dispatcher });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('60');
    expect(await refused.body.json()).toMatchObject({ error: 'rate_limited', rule: 'per_ip' });
    expect(giveUps).toMatchObject([{ attempt: 2, reason: 'max_attempts' }]);
    expect(hits).toHaveLength(3);
  });

  it('paces by the RateLimit fields: no 429 at all', async () => {
    const { url, hits, time, retries, dispatcher } = await setUp(perIp(2, '10s'), { random: () => 0.5 });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const response = await request(`${url}/items`, { dispatcher });
      await response.body.dump();
      statuses.push(response.statusCode);
    }
    expect(statuses).toEqual([200, 200, 200, 200]);
    expect(hits).toHaveLength(4);
    expect(retries).toEqual([]);
    expect(time.waits[0]).toBe(10_500); // the reset, plus half the jitter
  });

  it('retries a POST only with an Idempotency-Key, the same on each attempt, body and all', async () => {
    const { url, hits, giveUps, dispatcher } = await setUp(perIp(1, '10s'), { pacing: false });
    await (await request(`${url}/items`, { dispatcher })).body.dump();
    const post = (headers: Record<string, string>) =>
      request(`${url}/orders`, {
        dispatcher,
        method: 'POST',
        body: JSON.stringify({ n: 5 }),
        headers: { 'content-type': 'application/json', ...headers },
      });
    const unkeyed = await post({});
    expect(unkeyed.statusCode).toBe(429);
    await unkeyed.body.dump();
    expect(giveUps).toMatchObject([{ method: 'POST', reason: 'not_idempotent' }]);
    const keyed = await post({ 'Idempotency-Key': 'order-9' });
    expect(keyed.statusCode).toBe(200);
    expect((await keyed.body.json()) as OrderEcho).toEqual({ body: { n: 5 }, idempotencyKey: 'order-9' });
    const keys = hits.filter((hit) => hit.method === 'POST').map((hit) => hit.idempotencyKey);
    expect(keys).toEqual([undefined, 'order-9', 'order-9']);
  });

  it('adds an Idempotency-Key when asked', async () => {
    const { url, hits, dispatcher } = await setUp(perIp(1, '10s'), {
      pacing: false,
      idempotencyKey: () => 'made-1',
    });
    await (await request(`${url}/items`, { dispatcher })).body.dump();
    const response = await request(`${url}/orders`, {
      dispatcher,
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(response.statusCode).toBe(200);
    await response.body.dump();
    expect(hits.filter((hit) => hit.method === 'POST').map((hit) => hit.idempotencyKey)).toEqual([
      'made-1',
      'made-1',
    ]);
  });

  it('rejects with the abort while waiting to retry, and sends nothing more', async () => {
    const time = new VirtualTime(T0);
    server = await startServer('fastify', {
      rules: { domain: 'undici', rules: [perIp(1, '30s')] },
      clock: time.clock,
    });
    const controller = new AbortController();
    agent = new Agent();
    // The real timer: only the abort can end this 30-second wait within the test's time.
    const dispatcher = agent.compose(
      sluiceInterceptor({
        pacing: false,
        now: time.clock,
        events: { wait: () => controller.abort(new Error('gone')) },
      }),
    );
    await (await request(`${server.url}/items`, { dispatcher })).body.dump();
    await expect(request(`${server.url}/items`, { dispatcher, signal: controller.signal })).rejects.toThrow();
    expect(controller.signal.aborted).toBe(true);
    expect(server.hits).toHaveLength(2);
  });
});
