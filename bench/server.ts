/**
 * One bench server (a child of run.ts, pinned to a CPU by it): builds the app of the spec in
 * BENCH_SPEC, listens on a free loopback port, reports it over IPC, and answers `stats` requests.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
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

/** A CPU profile of a window of the run (profile.ts): what the warm-up cost stays out of it. */
const profiler = new Session();

async function profileStart(): Promise<void> {
  profiler.connect();
  await profiler.post('Profiler.enable');
  await profiler.post('Profiler.start');
}

async function profileStop(path: string): Promise<void> {
  const { profile } = await profiler.post('Profiler.stop');
  writeFileSync(path, JSON.stringify(profile));
  profiler.disconnect();
}

const port = await listen();
process.on('message', (message: unknown) => {
  if (message === 'stats') process.send?.({ type: 'stats', stats: tally.snapshot() });
  if (message === 'profile-start') void profileStart().then(() => process.send?.({ type: 'profiling' }));
  const { profileTo } = (message ?? {}) as { profileTo?: string };
  if (profileTo !== undefined) void profileStop(profileTo).then(() => process.send?.({ type: 'profiled' }));
});
process.on('disconnect', () => process.exit(0));
// A clean exit, so that node --cpu-prof writes its profile.
process.on('SIGINT', () => process.exit(0));
process.send?.({ type: 'ready', port });
