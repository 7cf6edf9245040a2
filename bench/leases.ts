/**
 * Local leases on a hot global rule, on a private redis-server: Redis calls per check without and with
 * `lease: {batch: K}`, and the overshoot leases allow: several gateways (limiters with their own clients)
 * hammer one global fixed_window rule; allowed requests are counted per window by decision time.
 * Run: npx tsx bench/leases.ts
 */
import { compileRules, createLimiter, type RuleSpec } from '@sluice/core';
import { RedisStore, recommendedRedisOptions } from '@sluice/redis';
import { Redis } from 'ioredis';
import { ready } from '../test/support/redis.js';
import { RESULT_PREFIX } from './lib/micro.js';
import { startBenchRedis } from './lib/redis.js';

const GATEWAYS = 4;
const IN_FLIGHT = 16;
const WINDOW_MS = 1000;
const BATCH = 100;

interface Run {
  readonly checks: number;
  readonly allowed: number;
  readonly scriptCalls: number;
  /** Allowed per whole window seen (first and last partial windows left out). */
  readonly perWindow: number[];
}

async function hammer(port: number, rule: RuleSpec, ms: number, admin: Redis): Promise<Run> {
  const clients = Array.from(
    { length: GATEWAYS },
    () => new Redis({ port, host: '127.0.0.1', ...recommendedRedisOptions }),
  );
  await Promise.all(clients.map(ready));
  const prefix = `lease${Math.random().toString(36).slice(2, 8)}`;
  const rules = compileRules({ rules: [rule] });
  const gateways = clients.map((client) =>
    createLimiter({ rules, store: new RedisStore({ client, prefix, timeoutMs: 1000 }) }),
  );
  const calls = async () =>
    Number(/cmdstat_evalsha:calls=(\d+)/.exec(await admin.info('commandstats'))?.[1] ?? 0);
  const before = await calls();
  const byWindow = new Map<number, number>();
  let checks = 0;
  let allowed = 0;
  let failedOpen = 0;
  const end = Date.now() + ms;
  const worker = async (gateway: (typeof gateways)[number]) => {
    while (Date.now() < end) {
      const decision = await gateway.check({});
      checks++;
      if (decision.failedOpen) failedOpen++;
      if (!decision.allowed) continue;
      allowed++;
      const window = Math.floor(Date.now() / WINDOW_MS);
      byWindow.set(window, (byWindow.get(window) ?? 0) + 1);
    }
  };
  await Promise.all(gateways.flatMap((gateway) => Array.from({ length: IN_FLIGHT }, () => worker(gateway))));
  const scriptCalls = (await calls()) - before;
  await Promise.all(gateways.map((gateway) => gateway.close()));
  for (const client of clients) client.disconnect();
  if (failedOpen > 0) throw new Error(`${failedOpen} decisions failed open: the run is not valid`);
  const windows = [...byWindow.keys()].sort((a, b) => a - b).slice(1, -1);
  return { checks, allowed, scriptCalls, perWindow: windows.map((w) => byWindow.get(w) ?? 0) };
}

const redis = await startBenchRedis();
try {
  const hot = { name: 'everyone', global: true, key: [], algorithm: 'fixed_window' } as const;
  // Calls per check: a limit no run reaches.
  const wide = { ...hot, limit: { requests: 100_000_000, per: '60s' } };
  const plain = await hammer(redis.server.port, wide, 3000, redis.admin);
  const leased = await hammer(redis.server.port, { ...wide, lease: { batch: BATCH } }, 3000, redis.admin);
  const perCheck = (run: Run) => run.scriptCalls / run.checks;
  const reduction = perCheck(plain) / perCheck(leased);
  console.log(
    `hot global rule, ${GATEWAYS} gateways x ${IN_FLIGHT} checks in flight: ` +
      `${perCheck(plain).toFixed(3)} Redis calls per check without lease (${Math.round(plain.checks / 3)} checks/s), ` +
      `${perCheck(leased).toFixed(4)} with lease {batch: ${BATCH}} (${Math.round(leased.checks / 3)} checks/s): ${reduction.toFixed(0)}x fewer`,
  );
  // Overshoot: a limit the load exceeds, so every window is full.
  const limit = 2000;
  const tight = { ...hot, limit: { requests: limit, per: `${WINDOW_MS}ms` } };
  const exact = await hammer(redis.server.port, tight, 5000, redis.admin);
  const loose = await hammer(redis.server.port, { ...tight, lease: { batch: BATCH } }, 5000, redis.admin);
  const over = (run: Run) => Math.max(...run.perWindow) - limit;
  console.log(
    `limit ${limit} per ${WINDOW_MS} ms window, allowed per window: without lease ${exact.perWindow.join(', ')} ` +
      `(overshoot ${over(exact)}); with lease {batch: ${BATCH}} ${loose.perWindow.join(', ')} ` +
      `(overshoot ${over(loose)}, bound ${GATEWAYS} gateways x ${BATCH} = ${GATEWAYS * BATCH})`,
  );
  console.log(
    `${RESULT_PREFIX}${JSON.stringify({
      callsPerCheck: perCheck(plain),
      callsPerCheckLeased: perCheck(leased),
      reduction,
      overshoot: over(exact),
      overshootLeased: over(loose),
      bound: GATEWAYS * BATCH,
      windowsExact: exact.perWindow,
      windowsLeased: loose.perWindow,
    })}`,
  );
} finally {
  await redis.stop();
}
