/**
 * A child process that takes two stream leases on a RedisStore, keeps them renewed, says "held" and waits to
 * be killed: the parent checks they outlive their lease time while it lives, and expire once it is killed.
 */

import { Redis } from 'ioredis';
import { createLimiter } from '../../packages/core/src/index.js';
import { RedisStore } from '../../packages/redis/src/index.js';
import { ready } from '../support/redis.js';
import { streamRules } from './rules.js';

const [port, prefix] = process.argv.slice(2);
const client = new Redis({ host: '127.0.0.1', port: Number(port) });
await ready(client);
const limiter = createLimiter({ rules: streamRules(), store: new RedisStore({ client, prefix: prefix! }) });
for (let i = 0; i < 2; i++) {
  const decision = await limiter.check({ ip: '10.0.0.1' });
  if (!decision.allowed) throw new Error('the holder was refused');
  limiter.hold(decision);
}
process.stdout.write('held\n');
// Stays alive (the heartbeat's timer alone would not keep it: it is unref'd) until killed.
setInterval(() => {}, 60_000);
