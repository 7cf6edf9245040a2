import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RateLimitInfo, Store } from '@sluice/core';
import { rateLimit } from '@sluice/fastify';
import Fastify, { type FastifyInstance } from 'fastify';
import { ORGS, REQUEST_RULES, TOKEN_RULES } from './rules.js';
import { askUpstream, type Completion, DEFAULT_MAX_TOKENS, events, meter } from './sse.js';

const keyOf = (req: IncomingMessage) => String(req.headers['x-api-key'] ?? '');

/**
 * A model proxy on Fastify: admits a completion on its `max_tokens` (every budget at once, all or nothing),
 * streams the upstream's tokens to the client, reporting each with `used(1)`, and settles at the upstream's
 * `usage`; a client that leaves stops the upstream and is settled at what was produced.
 */
export async function startProxy(
  upstreamUrl: string,
  store?: Store,
): Promise<{ url: string; app: FastifyInstance }> {
  const app = Fastify();
  await app.register(rateLimit, {
    rules: REQUEST_RULES,
    ...(store ? { store } : {}),
    headers: 'draft+model',
    validateApiKey: (key) => ORGS[key] !== undefined,
    descriptors: (request) => ({ org: ORGS[keyOf(request.raw)] ?? 'none' }),
    cost: (request) => (request.body as Completion | undefined)?.max_tokens ?? DEFAULT_MAX_TOKENS,
  });
  app.post(
    '/v1/chat/completions',
    { config: { rateLimit: { rules: TOKEN_RULES, afterBody: true } } },
    async (request, reply) => {
      reply.hijack();
      // Hijacked, the reply writes nothing itself: the rate-limit headers go with the stream's head.
      for (const [name, value] of Object.entries(reply.getHeaders()))
        if (value !== undefined) reply.raw.setHeader(name, value);
      await relay(upstreamUrl, request.body as Completion, request.rateLimit!, reply.raw, request.raw);
    },
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, app };
}

/** Streams the upstream's events through, metering its tokens; settles at its `usage`. */
async function relay(
  upstreamUrl: string,
  body: Completion,
  info: RateLimitInfo,
  res: ServerResponse,
  req: IncomingMessage,
): Promise<void> {
  const upstream = new AbortController();
  res.on('close', () => upstream.abort());
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
  try {
    const answer = await askUpstream(upstreamUrl, body, upstream.signal, req.socket.remoteAddress ?? '');
    for await (const event of events(answer.body!)) {
      if (!res.destroyed) res.write(`${event}\n\n`);
      await meter(event, info);
    }
  } catch {
    // The client left (the upstream was aborted) or the upstream failed: the end settles what was produced.
  }
  res.end();
}
