/**
 * Issue 30, reserve and settle: a process killed between admission and settle. A child admits a request on an
 * estimate on a private Redis and is SIGKILLed before it settles; a new limiter on the same Redis finds the
 * estimate still charged, no more and no less (README, "Token budgets": the reservation stands), and the budget
 * whole again once the window has passed. Both clocks stand still at NOW so the window rolls only when told.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createLimiter } from '@sluice/core';
import { RedisStore } from '@sluice/redis';
import { afterAll, describe, expect, it } from 'vitest';
import { privateRedis, sleep } from './long-lived/privateRedis.js';
import { ESTIMATE, LIMIT, tokenRules, WINDOW_MS } from './settle-killed-rules.js';
import { randomPrefix } from './support/redis.js';

/** The start of a fixed window: the window ends WINDOW_MS later. */
const NOW = Math.floor(Date.UTC(2026, 11, 1, 12, 0, 0) / WINDOW_MS) * WINDOW_MS;
const redis = privateRedis();

/** Starts the holder and waits for its "admitted" line; returns the tokens it saw left. */
function startHolder(prefix: string): { child: ChildProcess; admitted: Promise<number> } {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(import.meta.dirname, 'settle-killed-holder.ts'),
      String(redis.server.port),
      prefix,
      String(NOW),
    ],
    { cwd: join(import.meta.dirname, '..'), stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const admitted = new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (data: Buffer) => {
      const match = /admitted (\d+)/.exec(data.toString());
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`the holder exited with ${String(code)}`)));
  });
  return { child, admitted };
}

describe('a process killed between admission and settle', () => {
  let child: ChildProcess | undefined;
  afterAll(() => {
    if (child?.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  it('leaves its estimate charged on Redis until the window passes', async () => {
    const prefix = randomPrefix('killed');
    const holder = startHolder(prefix);
    child = holder.child;
    expect(await holder.admitted).toBe(LIMIT - ESTIMATE);

    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child!.once('exit', (_, signal) => resolve(signal)),
    );
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    await sleep(200);

    let now = NOW;
    const limiter = createLimiter({
      rules: tokenRules(),
      store: new RedisStore({ client: redis.client, prefix, timeoutMs: 2_000, maxTimeoutMs: 2_000 }),
      clock: () => now,
    });
    const ask = (tokens: number) => limiter.check({ api_key: 'k1', max_tokens: String(tokens) });
    // The reservation stands: exactly the estimate is charged, nothing given back by the holder's death.
    const read = await ask(0);
    expect(read.allowed).toBe(true);
    expect(read.results[0]!.remaining).toBe(LIMIT - ESTIMATE);
    const over = await ask(LIMIT - ESTIMATE + 1);
    expect(over.allowed).toBe(false);
    expect(over.retryAfterMs).toBe(WINDOW_MS);

    // Once the window has passed, the whole budget is back.
    now = NOW + WINDOW_MS;
    const whole = await ask(LIMIT);
    expect(whole.allowed).toBe(true);
    expect(whole.results[0]!.remaining).toBe(0);
  }, 20_000);
});
