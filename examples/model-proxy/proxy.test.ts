/**
 * The model proxy, on Fastify and on Hono, over real HTTP and real Server-Sent Events: a completion is admitted on its max_tokens and
 * settled at the upstream's usage; per-key and per-organisation token budgets; a client that leaves mid-stream.
 */
import { type IncomingMessage, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHonoProxy } from './hono.js';
import { startProxy } from './proxy.js';
import { PROMPT_TOKENS, startUpstream } from './upstream.js';

interface Answer {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

/** POSTs a completion as `key`; resolves with the whole answer, or once `leaveAfter` tokens came (then leaves). */
function complete(url: string, key: string, ask: object, leaveAfter?: number): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/v1/chat/completions`,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'x-api-key': key } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
          if (leaveAfter !== undefined && body.split('"content"').length - 1 >= leaveAfter) {
            req.destroy();
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
          }
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', () => {});
      },
    );
    req.on('error', (error) => (error.message === 'socket hang up' ? undefined : reject(error)));
    req.end(JSON.stringify(ask));
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Proxy {
  readonly url: string;
  close(): Promise<void>;
}

/** Each version of the proxy, started in front of the upstream. */
const PROXIES: Record<string, (upstreamUrl: string) => Promise<Proxy>> = {
  async fastify(upstreamUrl) {
    const { url, app } = await startProxy(upstreamUrl);
    return { url, close: () => app.close() };
  },
  hono: startHonoProxy,
};

describe.each(Object.keys(PROXIES))('examples/model-proxy on %s', (framework) => {
  let upstream: { url: string; close(): Promise<void> };
  let proxy: Proxy;
  beforeAll(async () => {
    upstream = await startUpstream();
    proxy = await PROXIES[framework]!(upstream.url);
  });
  afterAll(async () => {
    await proxy.close();
    await upstream.close();
  });

  it('admits on max_tokens, streams the tokens and settles at the usage', async () => {
    const first = await complete(proxy.url, 'k_carol', { max_tokens: 400, simulate_tokens: 40 });
    expect(first.status).toBe(200);
    expect(first.body).toContain(`"total_tokens":${PROMPT_TOKENS + 40}`);
    // Admitted on its estimate: 400 of the organisation's 500 a day reserved (the tightest token budget).
    expect(first.headers['x-ratelimit-remaining-tokens']).toBe('100');
    // Settled at 50: the next request (estimate 100) finds 500 - 50 - 100 left today.
    const next = await complete(proxy.url, 'k_carol', { max_tokens: 100, simulate_tokens: 1 });
    expect(next.headers['x-ratelimit-remaining-tokens']).toBe('350');
  });

  it("an organisation's keys share its daily budget: all or nothing", async () => {
    const alice = await complete(proxy.url, 'k_alice', { max_tokens: 450, simulate_tokens: 400 });
    expect(alice.status).toBe(200);
    // acme has 500 - 410 = 90 tokens left today: bob's request of 200 is refused, and charged nothing.
    const bob = await complete(proxy.url, 'k_bob', { max_tokens: 200 });
    expect(bob.status).toBe(429);
    expect(JSON.parse(bob.body)).toMatchObject({ rule: 'tokens_per_org_day' });
    const small = await complete(proxy.url, 'k_bob', { max_tokens: 90, simulate_tokens: 5 });
    expect(small.status).toBe(200);
  });

  it('a client that leaves mid-stream is settled at the tokens produced', async () => {
    const left = await complete(
      proxy.url,
      'k_carol',
      { max_tokens: 300, simulate_tokens: 1000, delay_ms: 5 },
      3,
    );
    expect(left.headers['x-ratelimit-remaining-tokens']).toBe('139');
    await sleep(200);
    // 300 were reserved; settled at the few tokens produced before the proxy saw the client go.
    const after = await complete(proxy.url, 'k_carol', { max_tokens: 0, simulate_tokens: 0 });
    const remaining = Number(after.headers['x-ratelimit-remaining-tokens']);
    // 439 were left before it: a few tokens (at most a dozen) came off, not the 300 reserved.
    expect(remaining).toBeGreaterThan(439 - 12);
    expect(remaining).toBeLessThan(439);
  });
});
