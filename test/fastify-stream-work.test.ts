/**
 * Does Sluice make Node's HTTP stream do more per response on Fastify (issue 16: a CPU profile showed more time in
 * nextTick, writev and request teardown with Sluice than with Fastify alone)? Counted, not timed: socket writes per
 * response and the listeners on each request and response, Fastify alone against Fastify with Sluice, over loopback.
 */
import { once } from 'node:events';
import { Agent, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { rateLimit } from '@sluice/fastify';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';

/** What one response cost the socket and how many listeners it carried when it finished. */
interface Work {
  readonly writes: number;
  readonly responseListeners: number;
  readonly requestListeners: number;
}

const EVENTS = ['finish', 'close', 'error', 'prefinish', 'end', 'aborted', 'data'] as const;

function listeners(emitter: IncomingMessage | ServerResponse): number {
  return EVENTS.reduce((sum, event) => sum + emitter.listenerCount(event), 0);
}

/** Counts the writes each connection's socket hands to the system (after corking), and the listeners of each exchange. */
function watch(app: FastifyInstance): Work[] {
  const work: Work[] = [];
  let writes = 0;
  app.server.on('connection', (socket: Socket) => {
    const inner = socket as unknown as Record<'_write' | '_writev', (...args: unknown[]) => unknown>;
    for (const method of ['_write', '_writev'] as const) {
      const original = inner[method];
      inner[method] = (...args: unknown[]) => {
        writes++;
        return original.apply(socket, args);
      };
    }
  });
  app.server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const before = writes;
    res.once('finish', () => {
      // Counted once the response is written: what Fastify and Sluice left on both sides of the exchange.
      work.push({
        writes: writes - before,
        responseListeners: listeners(res),
        requestListeners: listeners(req),
      });
    });
  });
  return work;
}

async function serve(withSluice: boolean): Promise<{ app: FastifyInstance; work: Work[]; port: number }> {
  const app = Fastify();
  if (withSluice)
    await app.register(rateLimit, {
      rules: {
        domain: 'stream',
        rules: [
          {
            name: 'per_key',
            match: { auth: 'api_key' },
            key: ['api_key'],
            limit: { requests: 1e9, per: '60s' },
          },
          { name: 'per_ip', match: { auth: 'anonymous' }, key: ['ip'], limit: { requests: 1e9, per: '60s' } },
        ],
      },
      logger: { warn() {} },
    });
  app.get('/', async () => 'ok');
  const work = watch(app);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, work, port: (app.server.address() as AddressInfo).port };
}

/** Sends `count` requests one after the other on one kept-alive connection. */
async function load(port: number, count: number): Promise<IncomingMessage['headers']> {
  let headers: IncomingMessage['headers'] = {};
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  for (let i = 0; i < count; i++) {
    const req = httpRequest({
      port,
      host: '127.0.0.1',
      path: '/',
      agent,
      headers: { 'x-api-key': `key-${i % 7}` },
    });
    req.end();
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    expect(res.statusCode).toBe(200);
    headers = res.headers;
    res.resume();
    await once(res, 'end');
  }
  agent.destroy();
  return headers;
}

describe('Fastify with Sluice, against Fastify alone', () => {
  const apps: FastifyInstance[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  it('writes each response in as many socket writes, with as many listeners, as Fastify alone', async () => {
    const alone = await serve(false);
    const limited = await serve(true);
    apps.push(alone.app, limited.app);
    expect((await load(alone.port, 20)).ratelimit).toBeUndefined();
    expect((await load(limited.port, 20)).ratelimit).toMatch(/^"per_key";r=\d+;t=\d+$/);
    expect(alone.work).toHaveLength(20);
    expect(limited.work).toHaveLength(20);
    // One write per response (headers and body corked together): no header written late, no extra write.
    expect(new Set(alone.work.map((w) => w.writes))).toEqual(new Set([1]));
    expect(limited.work.map((w) => w.writes)).toEqual(alone.work.map((w) => w.writes));
    expect(limited.work.map((w) => w.responseListeners)).toEqual(alone.work.map((w) => w.responseListeners));
    expect(limited.work.map((w) => w.requestListeners)).toEqual(alone.work.map((w) => w.requestListeners));
  });
});
