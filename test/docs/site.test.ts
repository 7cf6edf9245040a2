/**
 * The documentation site in a real headless browser (Debian's chromium driven by playwright-core): the site is
 * built once through the root `docs:build` script (into a temporary folder), served from a loopback port, and
 * crawled from its home page. Every page must load with every request that leaves loopback aborted (and none may
 * be attempted), log no error, render the code blocks its HTML holds and its images (the algorithm charts), and every internal link must reach a page
 * that exists and, with a `#hash`, an element of that id there. The local search must find `Retry-After`.
 * The links and anchors are checked on every page's HTML; the browser opens every page but the API reference's,
 * which it samples. Locally the test is skipped (with a message) when chromium is missing; in CI it fails instead.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, chromiumAvailable, launchChromium } from '../support/chromium.js';

const ROOT = join(import.meta.dirname, '..', '..');
const available = chromiumAvailable('docs-site');

/** The parts of playwright-core used here. */
interface Route {
  request(): { url(): string };
  continue(): Promise<void>;
  abort(): Promise<void>;
}
interface Locator {
  first(): Locator;
  click(): Promise<void>;
  fill(text: string): Promise<void>;
  waitFor(options: { state: 'visible'; timeout: number }): Promise<void>;
  allInnerTexts(): Promise<string[]>;
}
interface Page {
  on(event: 'console', listener: (message: { type(): string; text(): string }) => void): void;
  on(event: 'pageerror', listener: (error: Error) => void): void;
  goto(url: string, options?: { waitUntil: 'load' | 'networkidle' }): Promise<{ status(): number } | null>;
  evaluate<R>(fn: () => R): Promise<R>;
  locator(selector: string): Locator;
  close(): Promise<void>;
}
interface Context {
  route(pattern: string, handler: (route: Route) => Promise<void>): Promise<void>;
  newPage(): Promise<Page>;
}
interface Browser {
  newContext(): Promise<Context>;
  close(): Promise<void>;
}

/** What one page shows once hydrated, read in the browser. */
interface PageFacts {
  title: string;
  /** Code blocks rendered: [height in px, characters of text, highlighted spans]. */
  blocks: [number, number, number][];
  /** Images (the algorithm charts): [src, natural width once loaded]. */
  images: [string, number][];
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

/** A static server for the built site, as any host would serve it: `/x/` is `/x/index.html`, else 404.html. */
function serve(dist: string): Promise<Server> {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname));
    let file = join(dist, path);
    if (!file.startsWith(dist)) file = join(dist, '404.html');
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html');
    const found = existsSync(file);
    res.writeHead(found ? 200 : 404, {
      'content-type': TYPES[extname(found ? file : '.html')] ?? 'text/plain',
    });
    res.end(readFileSync(found ? file : join(dist, '404.html')));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** The part of the DOM that readPage reads (the project's typings have no DOM). */
interface DomElement {
  readonly textContent: string | null;
  readonly src: string;
  readonly naturalWidth: number;
  getBoundingClientRect(): { height: number };
  querySelectorAll(selector: string): { length: number };
}

/** Read in the browser: what a hydrated page shows. */
function readPage(): PageFacts {
  const { document } = globalThis as unknown as {
    document: {
      querySelector(s: string): DomElement | null;
      querySelectorAll(s: string): Iterable<DomElement>;
    };
  };
  return {
    title: document.querySelector('.vp-doc h1')?.textContent ?? '',
    blocks: [...document.querySelectorAll('.vp-doc div[class*="language-"]')].map((block) => [
      block.getBoundingClientRect().height,
      block.textContent?.trim().length ?? 0,
      block.querySelectorAll('pre span').length,
    ]),
    images: [...document.querySelectorAll('.vp-doc img')].map((img) => [img.src, img.naturalWidth]),
  };
}

/** Code blocks in the HTML the server sends for a page (before any script runs). */
function staticBlocks(html: string): number {
  return html.match(/<div class="language-[^"]*"/g)?.length ?? 0;
}

let tmp: string;
let dist: string;
let server: Server;
let origin: string;
let browser: Browser;

beforeAll(async () => {
  if (!available) return;
  tmp = mkdtempSync(join(tmpdir(), 'sluice-docs-'));
  dist = join(tmp, 'dist');

  // The repository's own script, so that what CI builds is what `pnpm docs:build` builds; pnpm hands the extra
  // arguments to its last command, vitepress build.
  const built = spawnSync('npx', ['--yes', 'pnpm@12.4.2', 'docs:build', '--outDir', dist], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
  });
  expect(built.status, `${built.stdout}\n${built.stderr}`).toBe(0);
  server = await serve(dist);
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium<Browser>();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** A browser context that aborts, and records, every request to anything but this machine's loopback. */
async function offlineContext(outside: string[]): Promise<Context> {
  const context = await browser.newContext();
  await context.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    if (url.protocol === 'data:' || url.hostname === '127.0.0.1') return route.continue();
    outside.push(url.href);
    return route.abort();
  });
  return context;
}

/** A page's path on the site for a built file (`guide/rules.html` -> `/guide/rules.html`, `index.html` -> `/`). */
function pathOf(file: string): string {
  return `/${file.replace(/(^|\/)index\.html$/, '$1')}`;
}

/** The built file serving a site path. */
function fileOf(path: string): string {
  return join(dist, decodeURIComponent(path.endsWith('/') ? `${path}index.html` : path));
}

/** The internal links and the ids of one built page, read from the HTML the server sends. */
function linksAndIds(path: string): { links: string[]; ids: Set<string> } {
  const html = readFileSync(fileOf(path), 'utf8');
  const base = new URL(path, origin);
  const links = [...html.matchAll(/<a\b[^>]*?\shref="([^"]*)"/g)]
    .map((match) => new URL(match[1]!.replaceAll('&amp;', '&'), base))
    .filter((url) => url.origin === origin)
    .map((url) => url.pathname + url.hash);
  const ids = new Set([...html.matchAll(/\sid="([^"]*)"/g)].map((match) => match[1]!));
  return { links, ids };
}

describe.skipIf(!available && !process.env.CI)('the documentation site, built and opened in chromium', () => {
  it('a crawl from the home page finds no broken internal link or anchor', () => {
    if (!available) throw new Error(`${CHROMIUM} is missing: CI must install chromium (see .ci/run)`);
    const pages = new Map<string, { links: string[]; ids: Set<string> }>();
    const broken: string[] = [];
    const queue: [string, string][] = [['/', '(start)']];
    while (queue.length > 0) {
      const [path, from] = queue.shift()!;
      if (pages.has(path)) continue;
      if (!existsSync(fileOf(path))) {
        broken.push(`${from} -> ${path}`);
        pages.set(path, { links: [], ids: new Set() });
        continue;
      }
      const page = linksAndIds(path);
      pages.set(path, page);
      for (const link of page.links) queue.push([link.split('#')[0]!, path]);
    }
    for (const [path, page] of pages)
      for (const link of page.links) {
        const [target, hash] = link.split('#');
        if (hash && !pages.get(target!)?.ids.has(decodeURIComponent(hash))) broken.push(`${path} -> ${link}`);
      }
    expect(broken).toEqual([]);
    // The crawl reached every page the build wrote (none is an orphan), and the guides are among them.
    const built = readdirSync(dist, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.html') && file !== '404.html')
      .map(pathOf);
    expect(built.filter((path) => !pages.has(path))).toEqual([]);
    for (const page of ['/start/fastify.html', '/guide/rules.html', '/guide/failure-modes.html', '/api/'])
      expect(pages.has(page), page).toBe(true);
  });

  it('every page loads with all outside requests blocked, logs no error, renders its code and charts', async () => {
    if (!available) throw new Error(`${CHROMIUM} is missing: CI must install chromium (see .ci/run)`);
    const outside: string[] = [];
    const context = await offlineContext(outside);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    page.on('pageerror', (error) => errors.push(error.message));

    // Every guide and reference page, and the API reference's index with one page in 25 of its ~500 generated
    // ones (the same renderer and theme; a full visit takes ~1 s a page on this machine, minutes for all).
    const all = readdirSync(dist, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.html') && file !== '404.html')
      .map(pathOf)
      .sort();
    const api = all.filter((path) => path.startsWith('/api/') && path !== '/api/');
    const paths = [...all.filter((path) => !api.includes(path)), ...api.filter((_, i) => i % 25 === 0)];
    expect(paths.length).toBeGreaterThan(30);
    const facts = new Map<string, PageFacts>();
    for (const path of paths) {
      const response = await page.goto(origin + path, { waitUntil: 'load' });
      expect(response?.status(), path).toBe(200);
      facts.set(path, await page.evaluate(readPage));
    }
    expect(outside, 'requests that left loopback').toEqual([]);
    expect(errors, 'console errors').toEqual([]);

    for (const [path, shown] of facts) {
      expect(shown.title, `${path} has a title`).not.toBe('');
      // Every code block the server sent is on the page once hydrated, with its text, highlighted, and visible.
      expect(shown.blocks.length, `${path}: code blocks`).toBe(
        staticBlocks(readFileSync(fileOf(path), 'utf8')),
      );
      for (const [height, characters, spans] of shown.blocks) {
        expect(height, `${path}: a code block's height`).toBeGreaterThan(10);
        expect(characters, `${path}: a code block's text`).toBeGreaterThan(0);
        expect(spans, `${path}: a code block's highlighting`).toBeGreaterThan(0);
      }
    }
    // Every image (the charts drawn at build time) loaded.
    const images = [...facts.values()].flatMap((shown) => shown.images);
    expect(images.filter(([, width]) => width === 0)).toEqual([]);
    expect(images.filter(([src]) => src.includes('/charts/')).length).toBeGreaterThanOrEqual(9);
    // Each getting-started page holds its install line, two servers, their runs and (NestJS) a tsconfig.
    for (const framework of ['fastify', 'express', 'koa', 'hono', 'nestjs'])
      expect(facts.get(`/start/${framework}.html`)?.blocks.length).toBeGreaterThanOrEqual(6);
  }, 600_000);

  it('the local search finds Retry-After, offline', async () => {
    if (!available) throw new Error(`${CHROMIUM} is missing: CI must install chromium (see .ci/run)`);
    const outside: string[] = [];
    const page = await (await offlineContext(outside)).newPage();
    await page.goto(`${origin}/`, { waitUntil: 'networkidle' });
    await page.locator('.VPNavBarSearch button').first().click();
    await page.locator('.VPLocalSearchBox input').fill('Retry-After');
    const results = page.locator('.VPLocalSearchBox .results .result');
    await results.first().waitFor({ state: 'visible', timeout: 10_000 });
    const texts = await results.allInnerTexts();
    expect(texts.length).toBeGreaterThan(3);
    expect(texts.some((text) => /retry-after/i.test(text))).toBe(true);
    expect(outside).toEqual([]);
  }, 60_000);
});
