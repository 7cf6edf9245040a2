/**
 * The `sluice replay --html` page in a real headless browser (Debian's chromium driven by playwright-core): it
 * loads offline with nothing fetched, logs no console error, draws its charts, and screenshots. Locally the test
 * is skipped (with a message) when chromium is missing; in CI (CI set) it fails instead: .ci/run installs it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { main } from '@sluice/cli';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { CHROMIUM, chromiumAvailable, launchChromium } from '../support/chromium.js';
import { type WatchedPage, watchPage } from '../support/page-watch.js';
import { writeLogs } from './fixtures/make-logs.js';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'replay');
const available = chromiumAvailable('replay-html');

/** The part of an SVG element the test reads, in the page. */
interface SvgElement {
  getAttribute(name: string): string | null;
  getBoundingClientRect(): { width: number; height: number };
  querySelectorAll(selector: string): { length: number };
}

/** The part of playwright-core used here (it is a dev dependency of @sluice/cli, resolved from there). */
interface Page extends WatchedPage {
  goto(url: string): Promise<unknown>;
  screenshot(options: { path: string; fullPage: boolean }): Promise<Buffer>;
  $$eval<R>(selector: string, fn: (elements: SvgElement[]) => R): Promise<R>;
}
interface Browser {
  newContext(options: { offline: boolean }): Promise<{ newPage(): Promise<Page> }>;
  close(): Promise<void>;
}

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'sluice-replay-html-'));
  writeLogs(tmp, 4000);
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

test.skipIf(!available && !process.env.CI)(
  'the replay page renders offline in headless chromium: charts, no console error, a screenshot',
  async () => {
    if (!available) throw new Error(`${CHROMIUM} is missing: CI must install chromium (see .ci/run)`);
    const html = join(tmp, 'report.html');
    const args = [
      'replay',
      join(tmp, 'access.log'),
      '--field',
      'api_key=extra.1',
      '--field',
      'tenant=extra.2',
    ];
    const err: string[] = [];
    const io = { out: () => {}, err: (line: string) => err.push(line) };
    const code = await main(
      [...args, '--compare', join(FIXTURES, 'rules.yaml'), join(FIXTURES, 'rules-new.yaml'), '--html', html],
      io,
    );
    expect(code, err.join('\n')).toBe(0);
    expect(readFileSync(html, 'utf8')).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org\/2000\/svg)/);

    const browser = await launchChromium<Browser>();
    try {
      const page = await (await browser.newContext({ offline: true })).newPage();
      const { errors, fetched } = watchPage(page);
      const url = pathToFileURL(html).href;
      await page.goto(url);
      const charts = await page.$$eval('svg', (svgs) =>
        svgs.map((svg) => {
          const box = svg.getBoundingClientRect();
          return {
            label: svg.getAttribute('aria-label'),
            width: box.width,
            height: box.height,
            marks: svg.querySelectorAll('rect, polyline, circle').length,
          };
        }),
      );
      const shot = join(tmp, 'report.png');
      const png = await page.screenshot({ path: shot, fullPage: true });
      expect(errors).toEqual([]);
      expect(fetched).toEqual([url]);
      const labels = charts.map((c) => c.label);
      for (const label of [
        'Changed outcomes by rule',
        'Denials per hour by rule',
        'Error of the estimate by rule',
        'Top keys by denials: search_per_ip',
      ]) {
        expect(labels).toContain(label);
      }
      for (const chart of charts) {
        expect(chart.width).toBeGreaterThan(100);
        expect(chart.height).toBeGreaterThan(20);
        expect(chart.marks).toBeGreaterThan(0);
      }
      // A PNG, and a full page of charts is well over a few kilobytes.
      expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
      expect(png.length).toBeGreaterThan(20_000);
    } finally {
      await browser.close();
    }
  },
  120_000,
);
