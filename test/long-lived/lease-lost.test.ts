/**
 * Issue 40: leases of open streams that vanish from Redis (a Redis restarted without persistence, an eviction)
 * stop counting those streams while they stay open. That must never be silent: the next renewal round finds
 * them gone, reports ERR_SLUICE_LEASE_LOST to the observer (sluice_store_errors_total) and logs the episode
 * once (SLUICE_LEASES_UNRENEWED). Real HTTP (Express SSE), a private redis-server restarted on its port.
 */
import { get, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rateLimit } from '@sluice/express';
import { RedisStore, recommendedRedisOptions } from '@sluice/redis';
import express from 'express';
import { Redis } from 'ioredis';
import { afterEach, expect, it, vi } from 'vitest';
import { randomPrefix, ready, startRedis } from '../support/redis.js';
import { streamRules } from './rules.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Opens an SSE stream; resolves with its status once the head is in. */
function open(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = get(url, { agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', (error) => (error.message === 'socket hang up' ? undefined : reject(error)));
    cleanups.push(() => req.destroy());
  });
}

it('leases gone from a restarted Redis are reported and logged once, not lost silently', async () => {
  let server = await startRedis();
  cleanups.push(() => server.stop());
  const client = new Redis({ host: server.host, port: server.port, ...recommendedRedisOptions });
  client.on('error', () => {});
  await ready(client);
  cleanups.push(() => client.disconnect());
  const lines: string[] = [];
  const codes: string[] = [];
  const app = express();
  app.use(
    rateLimit({
      rules: streamRules(),
      store: new RedisStore({ client, prefix: randomPrefix(), logger: { warn: () => {} } }),
      logger: { warn: (line) => void lines.push(line) },
      observer: { onStoreError: (_kind, error) => void codes.push((error as { code?: string }).code ?? '') },
    }),
  );
  app.get('/events', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: open\n\n');
  });
  const http: Server = await new Promise((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  cleanups.push(() => new Promise((resolve) => http.close(resolve)));
  cleanups.push(() => http.closeAllConnections());
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/events`;

  expect([await open(url), await open(url), await open(url)]).toEqual([200, 200, 429]);
  // Redis restarts empty on its port: the two held leases are gone while their streams stay open.
  const port = server.port;
  await server.stop();
  server = await startRedis({ port });
  await vi.waitFor(() => expect(codes).toContain('ERR_SLUICE_LEASE_LOST'), { timeout: 10_000 });
  const unrenewed = lines.filter((line) => line.includes('SLUICE_LEASES_UNRENEWED'));
  expect(unrenewed).toHaveLength(1);
  expect(unrenewed[0]).toMatch(/2 held lease\(s\) were gone from the store when renewed/);
  // Later rounds find them gone too: still one line for the episode.
  const seen = codes.length;
  await vi.waitFor(() => expect(codes.length).toBeGreaterThan(seen), { timeout: 10_000 });
  expect(lines.filter((line) => line.includes('SLUICE_LEASES_UNRENEWED'))).toHaveLength(1);
}, 60_000);
