/**
 * The challenge page in a real headless browser (Debian's chromium driven by playwright-core) against Sluice
 * servers on Fastify, Express and Koa over loopback HTTP: at the challenge stage a page load gets the page,
 * whose script solves the challenge with WebCrypto, sets the solution cookie and loads the page again, which
 * the server answers (with a pass cookie); the pass's requests then pass, and the one after is challenged again.
 * Skipped locally (with a message) without chromium; in CI (CI set) it fails instead: .ci/run installs it.
 */
import type { RuleSpec } from '@sluice/core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { FRAMEWORKS, startServer } from './client/servers.js';
import { CHROMIUM, chromiumAvailable, launchChromium } from './support/chromium.js';

const available = chromiumAvailable('challenge-page');

/** The part of playwright-core used here. */
interface Response {
  status(): number;
  url(): string;
}
interface Page {
  on(event: 'pageerror', listener: (error: Error) => void): void;
  on(event: 'response', listener: (response: Response) => void): void;
  goto(url: string): Promise<Response | null>;
  waitForFunction(fn: string, arg?: unknown, options?: { timeout: number }): Promise<unknown>;
  url(): string;
}
interface Context {
  newPage(): Promise<Page>;
  cookies(): Promise<{ name: string; httpOnly: boolean }[]>;
  close(): Promise<void>;
}
interface Browser {
  newContext(): Promise<Context>;
  close(): Promise<void>;
}
const RULE: RuleSpec = {
  name: 'pages',
  // Not the browser's own requests (favicon.ico).
  match: { route: '/items' },
  key: ['ip'],
  // An hour, not a minute: the test runs for many seconds, and a window aligned to the minute rolled over during it
  // once on a loaded machine (a fresh window let the request after the pass through).
  limit: { requests: 2, per: '1h' },
  algorithm: 'fixed_window',
  ban: { after: 8, within: '10m', for: '1h' },
  challenge: { after: 1, difficulty: 12, pass: 3, for: '1m' },
};

/** The route's JSON shown: the page is back. */
const OK = 'document.body.innerText.includes(\'"ok":true\')';

let browser: Browser | undefined;
beforeAll(async () => {
  if (!available) return;
  browser = await launchChromium<Browser>();
});
afterAll(() => browser?.close());

test.skipIf(!available && !process.env.CI)(
  'the page solves the challenge in chromium and returns to the page, on Fastify, Express and Koa',
  async () => {
    if (browser === undefined)
      throw new Error(`${CHROMIUM} is missing: CI must install chromium (see .ci/run)`);
    for (const framework of FRAMEWORKS) {
      const server = await startServer(framework, {
        rules: { domain: 'p', rules: [RULE] },
        challenge: { secret: 'a-challenge-secret-for-tests' },
        logger: { warn: () => {} },
      });
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        const errors: string[] = [];
        const statuses: number[] = [];
        page.on('pageerror', (error) => errors.push(error.message));
        const url = `${server.url}/items`;
        // The page's own loads (not the browser's favicon.ico).
        page.on('response', (response) => {
          if (response.url() === url) statuses.push(response.status());
        });
        for (let i = 0; i < 2; i++) expect((await page.goto(url))?.status()).toBe(200);
        // The third load: the page, which solves and loads the same address again.
        expect((await page.goto(url))?.status()).toBe(429);
        await page.waitForFunction(OK, undefined, { timeout: 20_000 });
        expect(page.url()).toBe(url);
        expect(statuses.slice(2)).toEqual([429, 200]);
        const cookies = await context.cookies();
        expect(cookies.find((c) => c.name === 'sluice_pass')?.httpOnly).toBe(true);
        // The pass: 3 requests in all (the one that solved it included), then a challenge again.
        for (let i = 0; i < 2; i++) expect((await page.goto(url))?.status(), framework).toBe(200);
        expect((await page.goto(url))?.status(), framework).toBe(429);
        // Solved again by the page (one bit harder), and back.
        await page.waitForFunction(OK, undefined, { timeout: 20_000 });
        expect(statuses).toEqual([200, 200, 429, 200, 200, 200, 429, 200]);
        expect(errors).toEqual([]);
      } finally {
        await context.close();
        await server.close();
      }
    }
  },
  120_000,
);
