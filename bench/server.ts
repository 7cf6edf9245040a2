/**
 * One bench server (a child of run.ts, pinned to a CPU by it): builds the app of the spec in
 * BENCH_SPEC, listens on a free loopback port, reports it over IPC, and answers `stats` requests.
 */
import type { AddressInfo } from 'node:net';
import { Tally } from './apps/common.js';
import { expressApp } from './apps/express.js';
import { fastifyApp } from './apps/fastify.js';
import { koaApp } from './apps/koa.js';
import type { ServerSpec } from './lib/spec.js';

const spec = JSON.parse(process.env.BENCH_SPEC ?? '') as ServerSpec;
const tally = new Tally();

const countRequest = () => {
  tally.requests += 1;
};

async function listen(): Promise<number> {
  if (spec.framework === 'fastify') {
    const app = await fastifyApp(spec, tally);
    await app.listen({ host: '127.0.0.1', port: 0 });
    app.server.on('request', countRequest);
    return (app.server.address() as AddressInfo).port;
  }
  const app = spec.framework === 'express' ? expressApp(spec, tally) : koaApp(spec, tally);
  const handler = spec.framework === 'express' ? app : (app as ReturnType<typeof koaApp>).callback();
  const { createServer } = await import('node:http');
  const server = createServer(handler as Parameters<typeof createServer>[1]);
  server.on('request', countRequest);
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

const port = await listen();
process.on('message', (message) => {
  if (message === 'stats') process.send?.({ type: 'stats', stats: tally.snapshot() });
});
process.on('disconnect', () => process.exit(0));
// A clean exit, so that node --cpu-prof writes its profile.
process.on('SIGINT', () => process.exit(0));
process.send?.({ type: 'ready', port });
