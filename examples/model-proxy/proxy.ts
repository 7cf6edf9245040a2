import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RateLimitInfo, Store } from '@sluice/core';
import { rateLimit } from '@sluice/fastify';
import Fastify, { type FastifyInstance } from 'fastify';
import { ORGS, REQUEST_RULES, TOKEN_RULES } from './rules.js';

/** What the client sends: an OpenAI-style completion request. */
interface Completion {
  readonly max_tokens?: number;
  readonly [field: string]: unknown;
}

/** The default estimate when a request names no `max_tokens`. */
const DEFAULT_MAX_TOKENS = 1024;

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
  res: import('node:http').ServerResponse,
  req: IncomingMessage,
): Promise<void> {
  const upstream = new AbortController();
  res.on('close', () => upstream.abort());
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
  try {
    const answer = await fetch(`${upstreamUrl}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ ...body, stream: true }),
      headers: { 'content-type': 'application/json', 'x-forwarded-for': req.socket.remoteAddress ?? '' },
      signal: upstream.signal,
    });
    let pending = '';
    for await (const chunk of answer.body!.pipeThrough(new TextDecoderStream())) {
      pending += chunk;
      let end = pending.indexOf('\n\n');
      while (end >= 0) {
        await forward(pending.slice(0, end), info, res);
        pending = pending.slice(end + 2);
        end = pending.indexOf('\n\n');
      }
    }
  } catch {
    // The client left (the upstream was aborted) or the upstream failed: the end settles what was produced.
  }
  res.end();
}

/** One event: sent on, its tokens metered, its usage settled. */
async function forward(event: string, info: RateLimitInfo, res: import('node:http').ServerResponse) {
  if (!res.destroyed) res.write(`${event}\n\n`);
  const data = event.startsWith('data: ') ? event.slice(6) : '';
  if (data === '' || data === '[DONE]') return;
  const parsed = JSON.parse(data) as { choices?: unknown[]; usage?: { total_tokens: number } };
  if (parsed.usage !== undefined) await info.settle?.(parsed.usage.total_tokens);
  else if ((parsed.choices?.length ?? 0) > 0) info.used?.(1);
}
