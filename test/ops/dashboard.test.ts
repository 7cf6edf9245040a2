/**
 * Issue 45: `sluice dashboard` (run as the CLI, a child process) over two Fastify gateways sharing a real
 * redis-server. A request without the token, or with a wrong one, is refused; the page, in real headless
 * Chromium, draws the heat map, the hottest keys with sparklines, store health and versions, and shows the
 * same numbers as the merged board read from the store; nothing is fetched but from the dashboard itself.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type MergedBoard, mergeBoards } from '@sluice/core';
import { RedisStore } from '@sluice/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, chromiumAvailable, launchChromium } from '../support/chromium.js';
import { type WatchedPage, watchPage } from '../support/page-watch.js';
import { randomPrefix, redisSuite } from '../support/redis.js';
import { boardsHolding, type GatewayChild, sendLoad, startGateway, zipfKeys } from './top-load.js';

const available = chromiumAvailable('dashboard');
const redis = redisSuite();
const prefix = randomPrefix('dash');
const SENT = 1_500;
const SHOWN = 5;
const gateways: GatewayChild[] = [];
let dashboard: ChildProcess | undefined;
let url: string;
let merged: MergedBoard;
let dir: string;

/** The part of playwright-core used here (a dev dependency of @sluice/cli, resolved from there). */
interface Page extends WatchedPage {
  goto(url: string): Promise<{ status(): number } | null>;
  waitForSelector(selector: string, options?: { timeout?: number; state?: 'attached' }): Promise<unknown>;
  content(): Promise<string>;
  screenshot(options: { path: string; fullPage: boolean }): Promise<Buffer>;
  $$eval<R>(selector: string, fn: (elements: Element[]) => R): Promise<R>;
}
interface Browser {
  newContext(): Promise<{ newPage(): Promise<Page> }>;
  close(): Promise<void>;
}

/** Starts `sluice dashboard` as the CLI runs it; resolves with the address it prints (token included). */
function startDashboard(): Promise<string> {
  const redisUrl = `redis://${redis.server.host}:${redis.server.port}`;
  const root = join(import.meta.dirname, '..', '..');
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(root, 'packages/cli/src/bin.ts'),
      'dashboard',
      '--redis',
      redisUrl,
      '--prefix',
      prefix,
      '--port',
      '0',
      '--interval',
      '500ms',
      '--keys',
      String(SHOWN),
    ],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  dashboard = child;
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`sluice dashboard exited with ${String(code)}`)));
    child.stdout!.on('data', (data: Buffer) => {
      const match = /sluice dashboard on (http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+)/.exec(data.toString());
      if (match) resolve(match[1]!);
    });
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-dashboard-'));
  const node = [{ host: redis.server.host, port: redis.server.port }];
  gateways.push(
    ...(await Promise.all([startGateway('gw-a', prefix, node), startGateway('gw-b', prefix, node)])),
  );
  await sendLoad(
    gateways.map((g) => g.url),
    zipfKeys(SENT, 200, 1.2, 0x1b873593),
  );
  const store = new RedisStore({ client: redis.client, prefix });
  merged = mergeBoards(await boardsHolding(store, 2, SENT), { keys: SHOWN });
  await store.close();
  url = await startDashboard();
}, 120_000);

afterAll(async () => {
  if (dashboard !== undefined && dashboard.exitCode === null) {
    const exited = new Promise((resolve) => dashboard!.once('exit', resolve));
    dashboard.kill('SIGTERM');
    await exited;
  }
  await Promise.all(gateways.map((g) => g.stop()));
  rmSync(dir, { recursive: true, force: true });
});

describe('sluice dashboard', () => {
  it('binds to loopback and refuses a request without the token, or with another', async () => {
    const address = new URL(url);
    expect(address.hostname).toBe('127.0.0.1');
    const token = address.searchParams.get('token')!;
    expect(token.length).toBeGreaterThanOrEqual(16);
    const base = `${address.origin}`;
    for (const path of ['/', '/api/view', '/?token=not-the-token', `/api/view?token=${token}x`]) {
      const response = await fetch(`${base}${path}`);
      expect(response.status, path).toBe(401);
      expect(await response.text()).not.toContain('gw-a');
    }
    const wrongBearer = await fetch(`${base}/api/view`, { headers: { authorization: 'Bearer nope' } });
    expect(wrongBearer.status).toBe(401);
    const api = await fetch(`${base}/api/view`, { headers: { authorization: `Bearer ${token}` } });
    expect(api.status).toBe(200);
    expect(api.headers.get('cache-control')).toBe('no-store');
    const { view } = (await api.json()) as { view: { board: MergedBoard } };
    expect(view.board.gateways.map((g) => g.gateway)).toEqual(['gw-a', 'gw-b']);
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'; script-src 'nonce-/);
    const html = await page.text();
    // One page, self-contained: no address of anything to fetch.
    expect(html).not.toMatch(/<script[^>]+src=|<link|https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
  });

  it.skipIf(!available && !process.env.CI)(
    'shows, in Chromium, the numbers of the merged board: hottest keys, heat map, versions, store health',
    async () => {
      if (!available) throw new Error(`${CHROMIUM} is missing: CI must install chromium (see .ci/run)`);
      const browser = await launchChromium<Browser>();
      try {
        const page = await (await browser.newContext()).newPage();
        const { errors, fetched } = watchPage(page);
        expect((await page.goto(url))?.status()).toBe(200);
        await page.waitForSelector('tr[data-tag]', { timeout: 20_000 });
        // Drawn, if flat: no request since the dashboard started.
        await page.waitForSelector('svg.spark polyline', { state: 'attached' });

        const rows = await page.$$eval('table[data-section="keys"] tr[data-tag]', (trs) =>
          trs.map((tr) => ({
            rule: tr.getAttribute('data-rule'),
            tag: tr.getAttribute('data-tag'),
            count: Number(tr.querySelector('.count')!.textContent!.replace(/,/g, '')),
            denied: Number(tr.querySelector('.denied')!.textContent!.replace(/,/g, '')),
          })),
        );
        for (const rule of merged.rules) {
          const denials = new Map(rule.denials.keys.map((k) => [k.tag, k.count]));
          expect(rows.filter((r) => r.rule === `watching/${rule.rule}`)).toEqual(
            rule.keys.keys.map((k) => ({
              rule: `watching/${rule.rule}`,
              tag: k.tag,
              count: k.count,
              denied: denials.get(k.tag) ?? 0,
            })),
          );
        }

        const cells = await page.$$eval(
          'svg[aria-label="Denial rate by rule and route"] rect[data-rule]',
          (rects) =>
            rects.map((rect) => ({
              rule: rect.getAttribute('data-rule'),
              route: rect.getAttribute('data-route'),
              requests: Number(rect.getAttribute('data-requests')),
              denied: Number(rect.getAttribute('data-denied')),
            })),
        );
        const expected = merged.rules.flatMap((rule) =>
          rule.routes.map(([route, requests, denied]) => ({
            rule: `watching/${rule.rule}`,
            route,
            requests,
            denied,
          })),
        );
        expect(cells).toEqual(expect.arrayContaining(expected));
        expect(cells.length).toBe(expected.length);

        const gatewaysShown = await page.$$eval('#health tr[data-gateway]', (trs) =>
          trs.map((tr) => tr.getAttribute('data-gateway')),
        );
        expect(gatewaysShown).toEqual(['gw-a', 'gw-b']);
        const versions = await page.$$eval('#versions tr[data-domain]', (trs) =>
          trs.map((tr) => tr.textContent),
        );
        expect(versions).toEqual([
          `watching${merged.domains[0]!.versions[0]!.version} on gw-a, gw-bone version`,
        ]);
        expect(await page.$$eval('#shards', (p) => p.map((e) => e.textContent))).toEqual([
          'a single Redis: no shards',
        ]);

        const png = await page.screenshot({ path: join(dir, 'dashboard.png'), fullPage: true });
        expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
        expect(png.length).toBeGreaterThan(20_000);
        expect(errors).toEqual([]);
        const origin = new URL(url).origin;
        expect(fetched.every((address) => address.startsWith(`${origin}/`))).toBe(true);
        expect(fetched.some((address) => address.startsWith(`${origin}/api/view`))).toBe(true);
      } finally {
        await browser.close();
      }
    },
    120_000,
  );

  it.skipIf(!available && !process.env.CI)(
    'a browser without the token gets no page',
    async () => {
      if (!available) throw new Error(`${CHROMIUM} is missing: CI must install chromium (see .ci/run)`);
      const browser = await launchChromium<Browser>();
      try {
        const page = await (await browser.newContext()).newPage();
        const response = await page.goto(new URL(url).origin);
        expect(response?.status()).toBe(401);
        const html = await page.content();
        expect(html).toContain('a token is required');
        expect(html).not.toContain('gw-a');
      } finally {
        await browser.close();
      }
    },
    60_000,
  );
});
