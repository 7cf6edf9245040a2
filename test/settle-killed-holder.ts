/**
 * A child process that admits one request on an estimate on a RedisStore, says "admitted" with the tokens left,
 * and waits, never settling, to be killed: the parent checks the reservation stands after the kill.
 */

import { Redis } from 'ioredis';
import { createLimiter } from '../packages/core/src/index.js';
import { RedisStore } from '../packages/redis/src/index.js';
import { ESTIMATE, tokenRules } from './settle-killed-rules.js';
import { ready } from './support/redis.js';

const [port, prefix, now] = process.argv.slice(2);
const client = new Redis({ host: '127.0.0.1', port: Number(port) });
await ready(client);
const limiter = createLimiter({
  rules: tokenRules(),
  store: new RedisStore({ client, prefix: prefix!, timeoutMs: 2_000, maxTimeoutMs: 2_000 }),
  clock: () => Number(now),
});
const decision = await limiter.check({ api_key: 'k1', max_tokens: String(ESTIMATE) });
if (!decision.allowed) throw new Error('the holder was refused');
process.stdout.write(`admitted ${decision.results[0]!.remaining}\n`);
// Stays alive, the decision unsettled, until killed.
setInterval(() => {}, 60_000);
