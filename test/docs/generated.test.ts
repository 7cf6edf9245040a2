/**
 * The generated parts of the docs site (scripts/docs): the rules reference lists every field the rule schema
 * has, the options reference every option name the code accepts (the names each constructor hands to
 * checkOptionNames, recorded here by wrapping it, and the adapters' zod schema), and every algorithm of the
 * registry has a chart drawn from its own decisions.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';

/** Every (owner, known names) pair a constructor checked its options against. */
const checked: { owner: string; known: readonly string[] }[] = [];

vi.mock('../../packages/core/src/base/optionNames.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../packages/core/src/base/optionNames.js')>();
  return {
    ...original,
    checkOptionNames: (owner: string, options: object | undefined, known: readonly string[]) => {
      checked.push({ owner, known });
      original.checkOptionNames(owner, options, known);
    },
  };
});
vi.mock('../../packages/client/src/optionNames.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../packages/client/src/optionNames.js')>();
  return {
    ...original,
    checkNames: (owner: string, options: object | undefined, known: readonly string[]) => {
      checked.push({ owner, known });
      original.checkNames(owner, options, known);
    },
  };
});

const { ALGORITHM_NAMES } = await import('../../packages/core/src/algorithms/index.js');
const { ruleSchema } = await import('../../packages/core/src/rules/schema.js');
const { RULE_FIELD_NOTES } = await import('../../scripts/docs/ruleFields.js');
const { ruleFields, rulesPage } = await import('../../scripts/docs/rules.js');
const { optionSections, optionsPage } = await import('../../scripts/docs/options.js');
const { OPTION_SOURCES } = await import('../../scripts/docs/optionSources.js');
const { algorithmCharts, BURST, chartsPage, requestTimes } = await import('../../scripts/docs/charts.js');

describe('rules reference', () => {
  const fields = ruleFields();
  const paths = [...fields.document, ...fields.rule].map((field) => field.path);
  const page = rulesPage();

  it('has a note for every schema field, and none for a field the schema lacks', () => {
    expect(paths).toEqual(expect.arrayContaining(Object.keys(ruleSchema.shape)));
    expect([...paths].sort()).toEqual(Object.keys(RULE_FIELD_NOTES).sort());
  });

  it('lists every field with its type, default and allowed values', () => {
    for (const path of paths) expect(page).toContain(`\`${path}\`</span>`);
    expect(page).toMatch(/`algorithm`<\/span> \| `fixed_window`, .*`quota` \| `sliding_window` \|/);
    for (const name of ALGORITHM_NAMES) expect(page).toContain(`\`${name}\``);
    // A custom field's type is its validator's own words.
    expect(page).toMatch(/`limit\.requests`<\/span> \(required\) \| a whole number of at least 0 \|/);
    expect(page).toMatch(/`rollout`<\/span> \| a percentage from 0 to 100 \| `100` \|/);
    expect(page).toMatch(
      /`count`<\/span> \| `failed`, `succeeded` \\\| a list of: an HTTP status from 100 to 599 \|/,
    );
  });
});

describe('options reference', () => {
  let page = '';
  let sections: Awaited<ReturnType<typeof optionSections>> = [];

  beforeAll(async () => {
    sections = optionSections();
    page = optionsPage(sections);
    // Each options object checked once with no options given: the wrapper records the names it accepts.
    const core = await import('@sluice/core');
    const attempts: (() => unknown)[] = [
      () => core.createLimiter({} as never),
      () => core.createLimiter({ rules: core.compileRules({ rules: [] }), regions: {} as never }),
      () => new core.MemoryStore({}),
      async () =>
        (await import('@sluice/core/store')).resilientStore(new core.MemoryStore(), { breaker: {} as never }),
      () => core.decisionLogObserver({ sample: {} } as never),
      () => core.watchRules('/nonexistent/rules.yaml', {}).close(),
      () => core.fileList('/nonexistent/list.txt', {}).close(),
      async () => new (await import('@sluice/redis')).RedisStore({} as never),
      async () => new (await import('@sluice/postgres')).PostgresStore({} as never),
      async () => (await import('@sluice/prometheus')).prometheusObserver({}),
      async () => (await import('@sluice/opentelemetry')).openTelemetryObserver({}),
      async () => (await import('@sluice/geoip')).geoipDescriptors({} as never),
      async () => (await import('@sluice/envoy')).createRateLimitService({} as never),
      async () => (await import('@sluice/websocket')).websocketLimit({ messages: {} } as never),
      async () => (await import('@sluice/client')).createFetch({}),
    ];
    for (const attempt of attempts)
      await Promise.resolve()
        .then(attempt)
        .catch(() => undefined);
  });

  function sectionNames(title: string): string[] {
    const section = sections.find((part) => part.title === title);
    if (section === undefined) throw new Error(`no section ${title}`);
    return section.options.map((option) => option.name);
  }

  it('documents, under its own heading, every name each constructor accepts', () => {
    const owners: Record<string, string> = {
      createLimiter: 'createLimiter',
      MemoryStore: 'MemoryStore',
      resilientStore: 'resilientStore',
      breaker: 'breaker',
      regions: 'regions',
      'createLimiter watch': 'watch',
      decisionLogObserver: 'decisionLogObserver',
      watchRules: 'watchRules',
      parseRules: 'loadRules, parseRules, resolveRules',
      loadRules: 'loadRules, parseRules, resolveRules',
      loadRulesSync: 'loadRules, parseRules, resolveRules',
      resolveRules: 'loadRules, parseRules, resolveRules',
      resolveRulesSync: 'loadRules, parseRules, resolveRules',
      compileRules: 'compileRules',
      PendingCalls: 'PendingCalls (store authors)',
      'decisionLogObserver sample': 'decisionLogObserver sample',
      '@sluice/client: backoff': '@sluice/client backoff',
      '@sluice/client: retryBudget': '@sluice/client retryBudget',
      '@sluice/client: events': '@sluice/client events',
      '@sluice/client: challenge': '@sluice/client challenge',
      fileList: 'fileList',
      RedisStore: 'RedisStore',
      PostgresStore: 'PostgresStore',
      prometheusObserver: 'prometheusObserver',
      openTelemetryObserver: 'openTelemetryObserver',
      geoipDescriptors: 'geoipDescriptors',
      createRateLimitService: 'createRateLimitService',
      'websocketLimit messages': 'websocketLimit messages',
      '@sluice/client': 'sluiceFetch (@sluice/client)',
    };
    const seen = new Set(checked.map((call) => call.owner));
    expect([...seen]).toEqual(
      expect.arrayContaining(
        Object.keys(owners).filter((owner) => !/^(parse|load|resolveRules$)/.test(owner)),
      ),
    );
    const missing: string[] = [];
    for (const { owner, known } of checked) {
      const title = owners[owner];
      // Nested options (a sample's rates, the client's backoff) are named on the page, in code; the others each
      // have a row in their own section.
      const documented =
        title === undefined ? known.filter((name) => page.includes(`\`${name}\``)) : sectionNames(title);
      missing.push(...known.filter((name) => !documented.includes(name)).map((name) => `${owner}: ${name}`));
    }
    expect(missing).toEqual([]);
  });

  it('documents every adapter option the adapters accept (their zod schema)', async () => {
    const { rateLimitOptionsSchema } = await import('@sluice/core/http');
    const shared = sectionNames(OPTION_SOURCES[1]!.title);
    for (const name of Object.keys(rateLimitOptionsSchema.shape)) {
      // onDenied is typed per framework: each adapter's own section has it.
      if (name === 'onDenied') {
        for (const adapter of ['@sluice/fastify', '@sluice/express', '@sluice/koa', '@sluice/hono'])
          expect(sectionNames(adapter)).toContain('onDenied');
      } else expect(shared).toContain(name);
    }
  });

  it("takes each option's text from its TSDoc, constants' values resolved", () => {
    expect(page).toMatch(/\| `keySecret` \| no \| `string` \| .*HMAC/);
    expect(page).not.toMatch(/\{@link/);
  });
});

describe('algorithm charts', () => {
  let charts: Awaited<ReturnType<typeof algorithmCharts>> = [];
  beforeAll(async () => {
    charts = await algorithmCharts();
  });

  it('draws one chart per registered algorithm, each from the decisions of the whole burst', () => {
    expect(charts.map((chart) => chart.algorithm)).toEqual([...ALGORITHM_NAMES]);
    for (const { algorithm, points, svg } of charts) {
      expect(
        points.map((point) => point.t),
        algorithm,
      ).toEqual(requestTimes());
      const allowed = points.filter((point) => point.allowed).length;
      // The burst is more than any limit: some of it denied, and some later requests allowed again.
      expect(allowed, algorithm).toBeGreaterThan(0);
      expect(
        points.slice(0, BURST).some((point) => !point.allowed),
        algorithm,
      ).toBe(true);
      expect(
        points.slice(BURST).some((point) => point.allowed),
        algorithm,
      ).toBe(true);
      // Every decision is a tick of the SVG, with what the limiter said.
      const ticks = [...svg.matchAll(/data-t="(\d+)" data-allowed="(true|false)" data-remaining="(\d+)"/g)];
      expect(
        ticks.map(([, t, ok, left]) => ({ t: Number(t), allowed: ok === 'true', remaining: Number(left) })),
      ).toEqual(points);
      expect(svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
      expect(svg).not.toMatch(/<script|href=/);
    }
  });

  it('tells the algorithms apart: a window and a bucket answer the same burst differently', () => {
    const allowedOf = (name: string) =>
      charts.find((chart) => chart.algorithm === name)!.points.map((point) => point.allowed);
    expect(allowedOf('fixed_window')).not.toEqual(allowedOf('token_bucket'));
    expect(allowedOf('sliding_window')).not.toEqual(allowedOf('fixed_window'));
    const page = chartsPage(charts);
    for (const name of ALGORITHM_NAMES) expect(page).toContain(`](/charts/${name}.svg)`);
  });
});

describe('API reference', () => {
  it('has an entry point for every entry every package exports (typedoc.json), each of them a source file', async () => {
    const { existsSync, readdirSync, readFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { ROOT } = await import('../../scripts/docs/options.js');
    const typedoc = JSON.parse(readFileSync(join(ROOT, 'typedoc.json'), 'utf8')) as { entryPoints: string[] };
    const exported: string[] = [];
    for (const dir of readdirSync(join(ROOT, 'packages'))) {
      const manifest = join(ROOT, 'packages', dir, 'package.json');
      if (!existsSync(manifest)) continue;
      const { exports = {} } = JSON.parse(readFileSync(manifest, 'utf8')) as {
        exports?: Record<string, { import?: { types?: string } }>;
      };
      for (const target of Object.values(exports)) {
        const types = target.import?.types;
        if (types !== undefined)
          exported.push(`packages/${dir}/${types.replace(/^\.\/dist\//, 'src/').replace(/\.d\.ts$/, '.ts')}`);
      }
    }
    expect(exported.length).toBeGreaterThan(15);
    expect([...typedoc.entryPoints].sort()).toEqual([...exported].sort());
    for (const entry of typedoc.entryPoints) expect(existsSync(join(ROOT, entry)), entry).toBe(true);
  });
});
