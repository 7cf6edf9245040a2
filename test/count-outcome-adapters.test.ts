/**
 * Counting by outcome on every adapter of the contract suite (Fastify, Express, Koa, Hono, NestJS on Express
 * and on Fastify), over real HTTP: with `count: failed`, answered requests (200) are refunded and handler
 * errors (500) stay counted.
 */
import { MemoryStore } from '@sluice/core';
import { afterEach, describe, expect, it } from 'vitest';
import { adapters, type RunningApp } from './adapters/apps.js';
import { CountingStore, until } from './support/counting-store.js';

const running: RunningApp[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((app) => app.close()));
});

async function status(url: string): Promise<number> {
  const response = await fetch(url);
  await response.text();
  return response.status;
}

describe.each(adapters)('count: failed on $name', (adapter) => {
  it('refunds the answered requests and keeps the failed ones', async () => {
    const store = new CountingStore(new MemoryStore());
    const rules = [
      {
        name: 'failures',
        key: ['ip'],
        algorithm: 'sliding_log',
        limit: { requests: 2, per: '1m' },
        count: 'failed',
      },
    ];
    const app = await adapter.start({ options: { rules: { rules }, store } as never });
    running.push(app);
    for (let i = 1; i <= 4; i++) {
      expect(await status(`${app.url}/search`)).toBe(200);
      await until(() => store.refunds === i);
    }
    expect(await status(`${app.url}/boom`)).toBe(500);
    expect(await status(`${app.url}/boom`)).toBe(500);
    expect(await status(`${app.url}/search`)).toBe(429);
    expect(store.refunds).toBe(4);
  });
});
