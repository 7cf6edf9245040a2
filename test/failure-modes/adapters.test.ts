/**
 * The "Failure modes" promises of a store outage through every adapter, on every remote store kind whose
 * server is unreachable (a closed port): the route still answers (never a 500), each decision that skipped the
 * store reaches the observer marked failed open, the episode is logged once, requests after the first second
 * pay a few ms; a rule with `on_store_error: deny` answers 503 `rate_limit_unavailable`, never cached.
 */
import type { Decision } from '@sluice/core';
import { afterEach, describe, expect, it } from 'vitest';
import { adapters, type RunningApp } from '../adapters/apps.js';
import { perIp, rules } from '../adapters/fixtures.js';
import { type Site, STORE_KINDS } from './sites.js';

const cases = adapters.flatMap((adapter) =>
  STORE_KINDS.map((kind) => [`${adapter.name} on ${kind.name}`, adapter, kind] as const),
);

describe.each(cases)('%s, store unreachable', (_name, adapter, kind) => {
  let running: RunningApp | undefined;
  let site: Site | undefined;

  afterEach(async () => {
    await running?.close();
    await site?.close();
    running = undefined;
    site = undefined;
  });

  async function start(onStoreError: 'allow' | 'deny') {
    const notices: string[] = [];
    const logger = { warn: (message: string) => void notices.push(message) };
    site = await kind.site(false, logger);
    const decisions: Decision[] = [];
    running = await adapter.start({
      options: {
        store: site.store,
        logger,
        observer: { onDecision: (decision) => void decisions.push(decision) },
        rules: rules(perIp(100, { on_store_error: onStoreError })),
      },
    });
    return { url: running.url, notices, decisions };
  }

  it('serves the route, each decision marked failed open, logged once, fast after the first second', async () => {
    const { url, notices, decisions } = await start('allow');
    const statuses: number[] = [];
    const later: number[] = [];
    const began = performance.now();
    while (performance.now() - began < 1800) {
      const sent = performance.now();
      const response = await fetch(`${url}/search`);
      await response.arrayBuffer();
      statuses.push(response.status);
      if (sent - began >= 1000) later.push(performance.now() - sent);
    }
    expect(new Set(statuses)).toEqual(new Set([200]));
    expect(decisions).toHaveLength(statuses.length);
    expect(decisions.filter((d) => !d.failedOpen)).toEqual([]);
    expect(notices.filter((n) => n.includes('SLUICE_STORE_UNREACHABLE'))).toHaveLength(1);
    expect(later.length).toBeGreaterThan(10);
    later.sort((a, b) => a - b);
    expect(later[Math.floor(later.length / 2)]).toBeLessThanOrEqual(50);
  }, 30_000);

  it('a rule failing closed answers 503 rate_limit_unavailable, not cached', async () => {
    const { url } = await start('deny');
    const response = await fetch(`${url}/search`);
    expect(response.status).toBe(503);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.json()).toMatchObject({ error: 'rate_limit_unavailable' });
  }, 30_000);
});
