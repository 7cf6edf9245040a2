/**
 * A gateway for the watching tests, run as a child process: Fastify with @sluice/fastify on a RedisStore (a
 * single Redis, or a Cluster given its nodes), publishing its board every 250 ms. Prints `listening <port>`
 * once it serves; stops on SIGTERM.
 *
 *   node --import tsx test/ops/top-gateway.ts <gateway> <prefix> <host:port>[,...] <cluster|single> <limit>
 */
import type { AddressInfo } from 'node:net';
import { rateLimit } from '@sluice/fastify';
import { RedisStore } from '@sluice/redis';
import Fastify from 'fastify';
import { Cluster, Redis } from 'ioredis';
import { TOP_KEY_SECRET, TOP_KEYS, topRules } from './top-load.js';

const [gateway, prefix, nodes, cluster, limit] = process.argv.slice(2);
const addresses = nodes!.split(',').map((node) => {
  const [host, port] = node.split(':');
  return { host: host!, port: Number(port) };
});
const client = cluster === 'cluster' ? new Cluster(addresses) : new Redis(addresses[0]!);
client.on('error', () => {});
const store = new RedisStore({ client, prefix: prefix!, timeoutMs: 2_000, maxTimeoutMs: 2_000 });
const app = Fastify();
await app.register(rateLimit, {
  rules: topRules(Number(limit)),
  store,
  keySecret: TOP_KEY_SECRET,
  watch: { publish: true, intervalMs: 250, keys: TOP_KEYS, gateway: gateway! },
  logger: { warn: () => {}, info: () => {} },
});
app.get('/search', async () => ({ ok: true }));
app.get('/export', async () => ({ ok: true }));
await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`listening ${(app.server.address() as AddressInfo).port}\n`);
process.once('SIGTERM', async () => {
  await app.close();
  client.disconnect();
  process.exit(0);
});
