import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import type { RateLimitInfo, Store } from '@sluice/core';
import { rateLimit } from '@sluice/hono';
import { type Context, Hono } from 'hono';
import { ORGS, REQUEST_RULES, TOKEN_RULES } from './rules.js';
import { askUpstream, type Completion, DEFAULT_MAX_TOKENS, events, meter } from './sse.js';

/** The completion body, parsed once: Hono keeps it for the handler. */
const completionOf = async (c: Context): Promise<Completion> => (await c.req.json()) as Completion;

/**
 * The model proxy on Hono: the same budgets as the Fastify one (proxy.ts). The completion route is decided
 * once its body is read (`afterBody`), on its `max_tokens`; the handler's stream relays the upstream's
 * events, reports each token with `used(1)` and settles at the `usage`; a client that leaves cancels the
 * stream, which stops the upstream, and the request is settled at what was produced.
 */
export async function startHonoProxy(
  upstreamUrl: string,
  store?: Store,
): Promise<{ url: string; close(): Promise<void> }> {
  const limiter = rateLimit({
    rules: REQUEST_RULES,
    ...(store ? { store } : {}),
    headers: 'draft+model',
    validateApiKey: (key) => ORGS[key] !== undefined,
    descriptors: (c) => ({ org: ORGS[c.req.header('x-api-key') ?? ''] ?? 'none' }),
    cost: async (c) =>
      c.req.method === 'POST' ? ((await completionOf(c)).max_tokens ?? DEFAULT_MAX_TOKENS) : undefined,
  });
  const app = new Hono();
  app.use(limiter);
  app.post('/v1/chat/completions', limiter.route(TOKEN_RULES, { afterBody: true }), async (c) =>
    relay(upstreamUrl, await completionOf(c), c.get('rateLimit')!),
  );
  const server = createAdaptorServer({ fetch: app.fetch }) as Server;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The client's stream: the upstream's events, metered as they pass. */
function relay(upstreamUrl: string, body: Completion, info: RateLimitInfo): Response {
  const upstream = new AbortController();
  let source: AsyncGenerator<string> | undefined;
  const stream = new ReadableStream<string>({
    async pull(controller) {
      try {
        source ??= events((await askUpstream(upstreamUrl, body, upstream.signal)).body!);
        const next = await source.next();
        if (next.done) return controller.close();
        controller.enqueue(`${next.value}\n\n`);
        await meter(next.value, info);
      } catch {
        // The upstream failed or was stopped: the end settles what was produced.
        controller.close();
      }
    },
    cancel() {
      upstream.abort();
    },
  });
  return new Response(stream.pipeThrough(new TextEncoderStream()), {
    headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store' },
  });
}
