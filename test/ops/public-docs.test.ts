/**
 * `sluice docs` and `sluice openapi`, checked against the rules that produced them: the limits page in real
 * headless Chromium (offline, nothing fetched, no console error) holds one row per public rule with the numbers
 * of its YAML, and its 429 is the one a real Hono app answers with; the backoff examples run against a server
 * that answers 429 first; the OpenAPI output is valid (@seriousme/openapi-schema-validator) and each operation
 * lists exactly the limits whose route and method match it.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { Validator } from '@seriousme/openapi-schema-validator';
import { rateLimit } from '@sluice/hono';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parse } from 'yaml';
import { CHROMIUM, chromiumAvailable, launchChromium } from '../support/chromium.js';
import { type PageWatch, type WatchedPage, watchPage } from '../support/page-watch.js';
import { runSluice } from './fixtures/sluice.js';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'public-docs');
const RULES = join(FIXTURES, 'rules.yaml');
const SPEC = join(FIXTURES, 'openapi.yaml');
const available = chromiumAvailable('public-docs');
const run = promisify(execFile);

/** A rule as the fixture writes it. */
interface WrittenRule {
  name: string;
  match?: Record<string, unknown>;
  limit?: { requests?: number; per?: string; concurrent?: number; lease?: string };
  mode?: string;
  action?: string;
  public?: boolean;
  on_store_error?: string;
}

const written = (parse(readFileSync(RULES, 'utf8')) as { rules: WrittenRule[] }).rules;
const SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600 };
const seconds = (text: string) => Number(text.slice(0, -1)) * SECONDS[text.slice(-1)]!;

/** The rules a user of the API is told about: limits, enforced, not marked public: false. */
const PUBLIC = written.filter((r) => r.action === undefined && r.mode !== 'shadow' && r.public !== false);
const HIDDEN = written.filter((r) => !PUBLIC.includes(r)).map((r) => r.name);

/** The policy a rule's responses carry, from its YAML: `"name";q=limit;w=window`. */
function policyOf(rule: WrittenRule): string {
  const limit = rule.limit!;
  const window = limit.per ?? limit.lease!;
  return `"${rule.name}";q=${limit.requests ?? limit.concurrent};w=${seconds(window)}`;
}

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'sluice-public-docs-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('sluice docs', () => {
  test('writes limits.md with every public limit and none of the others', async () => {
    const out = join(tmp, 'md');
    const done = await runSluice('docs', RULES, '--out', out);
    expect(done.code, done.err).toBe(0);
    expect(done.out).toBe(
      `${join(out, 'limits.md')} and ${join(out, 'limits.html')}: 6 public limits of shop_api version ` +
        '451d3af913f2 (3 rules left out: not public, shadow, deny or allow)',
    );
    const markdown = readFileSync(join(out, 'limits.md'), 'utf8');
    for (const rule of PUBLIC) expect(markdown).toContain(`\`${policyOf(rule)}\``);
    for (const name of HIDDEN) expect(markdown).not.toContain(name);
    expect(markdown).toContain('| /orders/:id | PUT, DELETE | 20 per 10s | per API key |');
    expect(markdown).toContain('### Plan pro');
    expect(markdown).toContain('After 3 refused requests within 1h, the key is blocked for 1h');
    expect(markdown).toContain('Retry-After is lengthened at random by up to 10%.');
    for (const fence of [
      '```http\nHTTP/1.1 429 Too Many Requests',
      '```http\nHTTP/1.1 503 Service Unavailable',
    ])
      expect(markdown).toContain(fence);
    expect(markdown).toContain('These limits do: login.');
  });

  test.skipIf(!available && !process.env.CI)(
    'the HTML page in headless chromium: offline, nothing fetched, its rows and responses those of the rules',
    async () => {
      if (!available) throw new Error(`${CHROMIUM} is missing: CI must install chromium (see .ci/run)`);
      const out = join(tmp, 'html');
      const done = await runSluice('docs', RULES, '--out', out, '--base-url', 'https://api.shop.example/v2');
      expect(done.code, done.err).toBe(0);
      const html = join(out, 'limits.html');
      expect(readFileSync(html, 'utf8')).not.toMatch(
        /<script|<link|src=|https?:\/\/(?!api\.(shop\.)?example)/,
      );
      const page = await openPage(html);
      try {
        expect(page.errors).toEqual([]);
        expect(page.fetched).toEqual([pathToFileURL(html).href]);
        expect(page.title).toBe('Rate limits: shop_api');
        // One row per public rule, in each its limit and policy as the YAML gives them.
        expect(page.rows.map((row) => row.rule).sort()).toEqual(PUBLIC.map((r) => r.name).sort());
        for (const rule of PUBLIC) {
          const row = page.rows.find((r) => r.rule === rule.name)!;
          const [routes, methods, limit, , policy] = row.cells;
          expect(policy).toBe(policyOf(rule));
          expect(limit).toMatch(new RegExp(`^${rule.limit!.requests ?? rule.limit!.concurrent} `));
          expect(routes).toBe((rule.match?.route as string | undefined) ?? 'every route');
          const method = rule.match?.method;
          expect(methods).toBe(method === undefined ? 'every method' : [method].flat().join(', '));
        }
        expect(page.headings).toEqual(
          expect.arrayContaining(['Everyone', 'Anonymous clients (no API key)', 'Plan pro', 'Plan free']),
        );
        // The 429 shown is the one an app serving these rules sends.
        const shown = page.blocks['429 response']!;
        const real = await honoDenial();
        expect(shown.split('\n')[0]).toBe('HTTP/1.1 429 Too Many Requests');
        expect(headerNames(shown)).toEqual(real.names);
        expect(headerValue(shown, 'RateLimit-Policy')).toBe(real.policy);
        expect(JSON.parse(shown.slice(shown.indexOf('\n\n') + 2))).toMatchObject({
          error: 'rate_limited',
          rule: real.rule,
        });
        expect(Number(headerValue(shown, 'Retry-After'))).toBeGreaterThan(0);
        expect(page.blocks['503 response']).toMatch(
          /^HTTP\/1\.1 503 Service Unavailable\n[\s\S]*"rule":"login"/,
        );
        expect(page.blocks['Backing off: curl']).toContain("'https://api.shop.example/v2/'");
        expect(page.png.subarray(1, 4).toString('latin1')).toBe('PNG');
      } finally {
        await page.close();
      }
    },
    120_000,
  );

  test('the backoff examples run: each waits out a 429 with its Retry-After and gets the 200', async () => {
    const out = join(tmp, 'backoff');
    let requests: number[] = [];
    const server = createServer((_req, res) => {
      requests.push(Date.now());
      if (requests.length === 1) res.writeHead(429, { 'Retry-After': '1' }).end('{"error":"rate_limited"}');
      else res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ok":true}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      expect(
        (await runSluice('docs', RULES, '--out', out, '--base-url', `http://127.0.0.1:${port}`)).code,
      ).toBe(0);
      const markdown = readFileSync(join(out, 'limits.md'), 'utf8');
      const code = (language: string) =>
        new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\\n\`\`\``).exec(markdown)![1]!;
      const runs: [string, () => Promise<{ stdout: string }>][] = [
        ['curl', () => run('sh', ['-c', code('sh')], { cwd: out })],
        ['javascript', () => run(process.execPath, ['--input-type=module', '-e', code('js')])],
      ];
      if (existsSync('/usr/bin/python3') || process.env.CI)
        runs.push(['python', () => run('python3', ['-c', code('python')])]);
      for (const [name, example] of runs) {
        requests = [];
        const { stdout } = await example();
        expect(stdout.trim(), name).toBe('200');
        expect(requests, name).toHaveLength(2);
        // Retry-After 1, plus up to 25% jitter: never sooner, and well before another doubling.
        expect(requests[1]! - requests[0]!, name).toBeGreaterThanOrEqual(990);
        expect(requests[1]! - requests[0]!, name).toBeLessThan(5000);
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  }, 60_000);

  test('usage errors: a misspelled flag, a header form the adapters do not know', async () => {
    const typo = await runSluice('docs', RULES, '--oout', tmp);
    expect(typo.code).toBe(2);
    expect(typo.err.split('\n')[0]).toBe('sluice docs: unknown option "--oout" (did you mean "--out"?)');
    const form = await runSluice('docs', RULES, '--headers', 'draft-9');
    expect(form.code).toBe(2);
    expect(form.err).toContain('--headers: invalid rate limit options: option "headers"');
  });
});

/** Header names of a response as text, in order, and one's value. */
const headerNames = (text: string) =>
  text
    .slice(text.indexOf('\n') + 1, text.indexOf('\n\n'))
    .split('\n')
    .map((line) => line.slice(0, line.indexOf(':')).toLowerCase())
    .filter((name) => name !== 'content-type')
    .sort();
const headerValue = (text: string, name: string) => new RegExp(`^${name}: (.*)$`, 'm').exec(text)?.[1];

/** The 429 a Hono app with these rules sends to an anonymous client past its limit. */
async function honoDenial(): Promise<{ names: string[]; policy: string | null; rule: string }> {
  const app = new Hono();
  app.use(
    rateLimit({
      rules: RULES,
      logger: { warn: () => {} },
      getConnInfo: () => ({ remote: { address: '198.51.100.4' } }),
    }),
  );
  app.get('/', (c) => c.json({ ok: true }));
  for (;;) {
    const response = await app.request('/');
    if (response.status !== 429) continue;
    const names = [...response.headers.keys()].filter((name) => name !== 'content-type').sort();
    const body = (await response.json()) as { rule: string };
    return { names, policy: response.headers.get('RateLimit-Policy'), rule: body.rule };
  }
}

/** What the test reads of the page in chromium. */
interface OpenedPage extends PageWatch {
  readonly title: string;
  readonly rows: { rule: string; cells: string[] }[];
  readonly headings: string[];
  /** Each <pre>'s text by its aria-label. */
  readonly blocks: Record<string, string>;
  readonly png: Buffer;
  close(): Promise<void>;
}

interface Element {
  getAttribute(name: string): string | null;
  readonly textContent: string | null;
  querySelectorAll(selector: string): ArrayLike<Element>;
}
interface Page extends WatchedPage {
  goto(url: string): Promise<unknown>;
  title(): Promise<string>;
  screenshot(options: { fullPage: boolean }): Promise<Buffer>;
  $$eval<R>(selector: string, fn: (elements: Element[]) => R): Promise<R>;
}
interface Browser {
  newContext(options: { offline: boolean }): Promise<{ newPage(): Promise<Page> }>;
  close(): Promise<void>;
}

async function openPage(html: string): Promise<OpenedPage> {
  const browser = await launchChromium<Browser>();
  const page = await (await browser.newContext({ offline: true })).newPage();
  const { errors, fetched } = watchPage(page);
  await page.goto(pathToFileURL(html).href);
  const rows = await page.$$eval('table.limits tbody tr', (trs) =>
    trs.map((tr) => ({
      rule: tr.getAttribute('data-rule') ?? '',
      cells: Array.from(tr.querySelectorAll('td'), (td) => td.textContent ?? ''),
    })),
  );
  const headings = await page.$$eval('h3', (hs) => hs.map((h) => h.textContent ?? ''));
  const blocks = await page.$$eval('pre', (pres) =>
    Object.fromEntries(pres.map((pre) => [pre.getAttribute('aria-label') ?? '', pre.textContent ?? ''])),
  );
  return {
    errors,
    fetched,
    title: await page.title(),
    rows,
    headings,
    blocks,
    png: await page.screenshot({ fullPage: true }),
    close: () => browser.close(),
  };
}

describe('sluice openapi', () => {
  /** The limits whose route and method match an operation, from the YAML: what x-ratelimit must list. */
  function expectedLimits(path: string, method: string): string[] {
    const shape = (route: string) => route.replace(/:(\w+)|\{\w+\}/g, '{}');
    return PUBLIC.filter((rule) => {
      const route = rule.match?.route as string | undefined;
      const methods = rule.match?.method as string | string[] | undefined;
      return (
        (route === undefined || shape(route) === shape(path)) &&
        (methods === undefined || [methods].flat().includes(method.toUpperCase()))
      );
    }).map((rule) => rule.name);
  }

  /** Checks a document written by the command against the fixture's rules, and as OpenAPI. */
  async function checkDocument(document: Record<string, unknown>): Promise<void> {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    const paths = document.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>;
    let operations = 0;
    for (const [path, item] of Object.entries(paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (method === 'parameters') continue;
        operations++;
        const limits =
          (operation as { 'x-ratelimit'?: { name: string; policy: string }[] })['x-ratelimit'] ?? [];
        expect(
          limits.map((l) => l.name),
          `${method} ${path}`,
        ).toEqual(expectedLimits(path, method));
        for (const limit of limits)
          expect(limit.policy).toBe(policyOf(PUBLIC.find((r) => r.name === limit.name)!));
        const responses = operation.responses;
        const ownDenial = path === '/orders/{orderId}' && method === 'put';
        expect(responses['429']).toEqual(
          ownDenial
            ? { description: 'Our own words for a 429' }
            : { $ref: '#/components/responses/RateLimited' },
        );
        const closed = limits.some((l) => PUBLIC.find((r) => r.name === l.name)!.on_store_error === 'deny');
        expect(responses['503'] !== undefined, `${method} ${path} 503`).toBe(closed);
      }
    }
    expect(operations).toBe(8);
    const text = JSON.stringify(document);
    for (const name of HIDDEN) expect(text).not.toContain(name);
    const components = document.components as {
      headers: Record<string, unknown>;
      responses: Record<string, unknown>;
    };
    expect(Object.keys(components.headers).sort()).toEqual([
      'Cache-Control',
      'RateLimit',
      'RateLimit-Policy',
      'Retry-After',
      'X-RateLimit-Rule',
    ]);
    expect(components.responses.Results).toEqual({ description: 'Search results' });
    const login = paths['/login']!.post!.responses['200'] as { headers: Record<string, unknown> };
    expect(Object.keys(login.headers)).toEqual(['RateLimit', 'RateLimit-Policy']);
  }

  test('YAML in, YAML out: every operation gets the limits that match it, valid OpenAPI 3.0', async () => {
    const out = join(tmp, 'openapi.yaml');
    const done = await runSluice('openapi', RULES, '--spec', SPEC, '--out', out);
    expect(done.code, done.err).toBe(0);
    expect(done.err.split('\n')).toEqual([
      `${out}: 6 public limits of shop_api on 8 operations; valid OpenAPI`,
      '  GET /login: anonymous_per_ip, pro_per_key, free_per_key',
      '  POST /login: anonymous_per_ip, pro_per_key, free_per_key, login',
      '  GET /orders/{orderId}: anonymous_per_ip, pro_per_key, free_per_key',
      '  PUT /orders/{orderId}: anonymous_per_ip, pro_per_key, free_per_key, orders_write',
      '  DELETE /orders/{orderId}: anonymous_per_ip, pro_per_key, free_per_key, orders_write',
      '  POST /exports: anonymous_per_ip, pro_per_key, free_per_key, exports',
      '  GET /internal/stats: anonymous_per_ip, pro_per_key, free_per_key',
      '  GET /search: anonymous_per_ip, pro_per_key, free_per_key',
      "kept the document's own PUT /orders/{orderId} 429 response",
    ]);
    const text = readFileSync(out, 'utf8');
    expect(text.startsWith('openapi: 3.0.3\n')).toBe(true);
    await checkDocument(parse(text));
  });

  test('JSON out to stdout and to a .json file; a base path the routes start with', async () => {
    const json = join(tmp, 'spec.json');
    const first = await runSluice('openapi', RULES, '--spec', SPEC, '--out', json);
    expect(first.code, first.err).toBe(0);
    await checkDocument(JSON.parse(readFileSync(json, 'utf8')));
    // A JSON document comes back as JSON on stdout; the same again is the same (the examples are fixed).
    const again = await runSluice('openapi', RULES, '--spec', json);
    expect(again.code, again.err).toBe(0);
    expect(JSON.parse(again.out)).toEqual(JSON.parse(readFileSync(json, 'utf8')));
    const based = await runSluice('openapi', RULES, '--spec', SPEC, '--base-path', '/v2');
    expect(based.code, based.err).toBe(0);
    expect(based.err).toContain(
      'no operation matches the routes of: login, orders_write, exports (see --base-path)',
    );
  });

  test('a document that is not valid OpenAPI is refused, and so are misspelled flags', async () => {
    const broken = join(tmp, 'broken.yaml');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(broken, 'openapi: 3.1.0\npaths: {}\n');
    const refused = await runSluice('openapi', RULES, '--spec', broken, '--out', join(tmp, 'never.yaml'));
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(`${broken}: not a valid OpenAPI 3 document; nothing written`);
    expect(existsSync(join(tmp, 'never.yaml'))).toBe(false);
    const typo = await runSluice('openapi', RULES, '--sepc', SPEC);
    expect(typo.err.split('\n')[0]).toBe('sluice openapi: unknown option "--sepc" (did you mean "--spec"?)');
    expect((await runSluice('openapi', RULES)).err).toContain('openapi needs --spec <openapi.yaml>');
  });

  test('a --spec that cannot be read: exit 2, the reason on stderr, nothing written', async () => {
    const missing = join(tmp, 'no-such-spec.yaml');
    const run = await runSluice('openapi', RULES, '--spec', missing, '--out', join(tmp, 'never.yaml'));
    expect(run).toEqual({ code: 2, out: '', err: `${missing}: no such file` });
    const folder = await runSluice('openapi', RULES, '--spec', tmp);
    expect(folder).toEqual({ code: 2, out: '', err: `${tmp}: is a directory` });
    expect(existsSync(join(tmp, 'never.yaml'))).toBe(false);
  });
});
