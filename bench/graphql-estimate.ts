/**
 * The IBM cost spec's estimator of @sluice/graphql against graphql-query-complexity 2, on one schema and the
 * same queries, per operation, in interleaved rounds (each round starts with another contender):
 * - cold: from the query text, nothing cached. Ours: parse, bounds, validate (specifiedRules), compile,
 *   evaluate (an estimator with cacheSize 0). Theirs: parse, then graphql-js `validate` with specifiedRules and
 *   createComplexityRule (fieldExtensionsEstimator, simpleEstimator), as their README sets it up.
 * - cached: the same query again. Ours: an estimator that has seen it (LRU by text; the variables coerced and
 *   what they change evaluated). Theirs: getComplexity on the document already parsed and validated (a
 *   server's own document cache), which still visits the whole document per request.
 * - baseline: parse and validate alone (specifiedRules), which both cold paths do: what each adds to it, per
 *   round, is the analysis itself, and compares more steadily on a busy machine than the totals.
 * `uptime` is printed before and after: figures from a busy machine are preliminary. Run with NODE_ENV=production,
 * as servers run: graphql-js otherwise adds its development checks (a cross-realm test on each failed
 * instanceof) to both contenders.
 * Run: NODE_ENV=production npx tsx bench/graphql-estimate.ts [--slices=30 --ms=20]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildSchema, type DocumentNode, parse, specifiedRules, validate } from 'graphql';
import {
  createComplexityRule,
  fieldExtensionsEstimator,
  getComplexity,
  simpleEstimator,
} from 'graphql-query-complexity';
import { rotate } from './lib/stats.js';

type Cost = typeof import('../packages/graphql/src/cost/index.js');

/**
 * The estimator compiled by tsc to bench/dist/graphql-cost, as users run it: under tsx, esbuild's keepNames
 * wrapper would tax every closure the compiler creates (graphql-query-complexity is plain JavaScript). Its one
 * import of @sluice/core (ConfigError, checkOptionNames) comes from core's dist, built if missing.
 */
async function compiledEstimator(): Promise<Cost> {
  const root = fileURLToPath(new URL('../', import.meta.url));
  const out = join(root, 'bench/dist/graphql-cost');
  rmSync(out, { recursive: true, force: true });
  if (!existsSync(join(root, 'packages/core/dist/index.js'))) {
    execFileSync(process.execPath, [join(root, 'scripts/build-package.mjs')], {
      cwd: join(root, 'packages/core'),
    });
  }
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const source = join(root, 'packages/graphql/src/cost');
  const flags = [
    '--module',
    'NodeNext',
    '--moduleResolution',
    'NodeNext',
    '--target',
    'ES2022',
    '--skipLibCheck',
  ];
  const run = spawnSync(
    process.execPath,
    [tsc, join(source, 'index.ts'), '--outDir', out, '--rootDir', source, ...flags],
    {
      encoding: 'utf8',
    },
  );
  if (!existsSync(join(out, 'index.js')))
    throw new Error(`tsc wrote no estimator:\n${run.stdout}${run.stderr}`);
  return (await import(pathToFileURL(join(out, 'index.js')).href)) as Cost;
}

const { costDirectivesSdl, costEstimator } = await compiledEstimator();

const schema = buildSchema(`${costDirectivesSdl}
  interface Node { id: ID! }
  type Person implements Node {
    id: ID!
    name: String
    born: Int
    films(first: Int, after: String): FilmConnection @listSize(slicingArguments: ["first"], sizedFields: ["edges"])
    friends(first: Int): [Person] @listSize(slicingArguments: ["first"])
  }
  type Film implements Node {
    id: ID!
    title: String
    rating: Float @cost(weight: "2.0")
    director: Person
    cast(first: Int): [Person] @listSize(slicingArguments: ["first"])
  }
  type FilmEdge { cursor: String node: Film }
  type PageInfo { hasNextPage: Boolean endCursor: String }
  type FilmConnection { edges: [FilmEdge] pageInfo: PageInfo totalCount: Int }
  union SearchResult = Person | Film
  input FilmFilter { title: String minRating: Float @cost(weight: "3.0") }
  type Query {
    person(id: ID!): Person
    films(first: Int, after: String, filter: FilmFilter): FilmConnection
      @listSize(slicingArguments: ["first"], sizedFields: ["edges"])
    search(text: String!, first: Int): [SearchResult] @listSize(slicingArguments: ["first"])
    node(id: ID!): Node
  }
`);

interface Case {
  readonly name: string;
  readonly query: string;
  readonly variables: Record<string, unknown>;
}

const CASES: readonly Case[] = [
  { name: 'small', query: '{ person(id: "1") { name born } }', variables: {} },
  {
    name: 'connection + fragment + variables',
    query: `query Films($n: Int!, $filter: FilmFilter) {
      films(first: $n, filter: $filter) {
        totalCount
        pageInfo { hasNextPage endCursor }
        edges { cursor node { ...FilmParts } }
      }
    }
    fragment FilmParts on Film { id title rating director { name born } cast(first: 5) { name } }`,
    variables: { n: 20, filter: { minRating: 3.5 } },
  },
  {
    name: 'union + interface',
    query: `query Search($text: String!) {
      search(text: $text, first: 10) {
        ... on Person { name films(first: 3) { edges { node { title } } } }
        ... on Film { title rating director { name } }
      }
      node(id: "2") { id ... on Film { title } }
    }`,
    variables: { text: 'x' },
  },
  {
    name: 'nested, 60 fields',
    query: `{
      person(id: "1") {
        id name born
        friends(first: 10) {
          id name born
          friends(first: 5) { id name born films(first: 3) { totalCount edges { node { id title rating } } } }
          films(first: 4) {
            totalCount pageInfo { hasNextPage endCursor }
            edges { cursor node { id title rating director { id name born } cast(first: 3) { id name born } } }
          }
        }
        films(first: 10) {
          totalCount pageInfo { hasNextPage endCursor }
          edges { cursor node { id title rating director { id name born friends(first: 2) { id name } } } }
        }
      }
      a: search(text: "a", first: 5) { ... on Person { id name } ... on Film { id title rating } }
      b: search(text: "b", first: 5) { ... on Person { id name born } ... on Film { id title } }
    }`,
    variables: {},
  },
];

const estimators = [fieldExtensionsEstimator(), simpleEstimator({ defaultComplexity: 1 })];
const cold = costEstimator(schema, { cacheSize: 0 });
const cached = costEstimator(schema);
const documents = new Map<Case, DocumentNode>(CASES.map((c) => [c, parse(c.query)]));

type Contender = { readonly name: string; readonly run: (c: Case) => number };

const BASELINE = 'baseline: parse + validate';
const SLUICE_COLD = 'sluice cold';
const GQC_COLD = 'gqc cold (parse + validate with the rule)';

const contenders: readonly Contender[] = [
  {
    name: BASELINE,
    run: (c) => validate(schema, parse(c.query), specifiedRules).length,
  },
  {
    name: SLUICE_COLD,
    run: (c) => {
      const result = cold.estimate({ query: c.query, variables: c.variables });
      return result.ok ? result.cost : Number.NaN;
    },
  },
  {
    name: GQC_COLD,
    run: (c) => {
      let complexity = Number.NaN;
      const rule = createComplexityRule({
        estimators,
        maximumComplexity: 1e9,
        variables: c.variables,
        onComplete: (value: number) => {
          complexity = value;
        },
      });
      const errors = validate(schema, parse(c.query), [...specifiedRules, rule]);
      return errors.length === 0 ? complexity : Number.NaN;
    },
  },
  {
    name: 'sluice cached',
    run: (c) => {
      const result = cached.estimate({ query: c.query, variables: c.variables });
      return result.ok ? result.cost : Number.NaN;
    },
  },
  {
    name: 'gqc getComplexity (document cached)',
    run: (c) => getComplexity({ schema, query: documents.get(c)!, variables: c.variables, estimators }),
  },
];

function arg(name: string): string | undefined {
  return process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}

function uptime(): string {
  try {
    return execFileSync('uptime', { encoding: 'utf8' }).trim();
  } catch {
    return '(uptime not available)';
  }
}

/**
 * CPU µs per operation (this process's user and system time) over `operations` runs: on a shared machine the
 * time other processes take the CPU away does not count against a contender.
 */
function measure(contender: Contender, c: Case, operations: number): number {
  let sink = 0;
  const cpu = process.cpuUsage();
  for (let i = 0; i < operations; i++) sink += contender.run(c);
  const used = process.cpuUsage(cpu);
  if (Number.isNaN(sink) || (contender.name === BASELINE && sink !== 0))
    throw new Error(`${contender.name} failed on ${c.name}`);
  return (used.user + used.system) / operations;
}

/** Operations that take about `ms` of CPU (at least 10), after a warm-up of about ten times as long. */
function calibrate(contender: Contender, c: Case, ms: number): number {
  let operations = 10;
  for (;;) {
    const us = measure(contender, c, operations) * operations;
    if (us >= ms * 10_000) return Math.max(10, Math.round((operations * ms * 1000) / us));
    operations *= 2;
  }
}

/** `median (p25–p75)`. */
function quartiles(values: readonly number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  const digits = Math.abs(at(0.5)) < 10 ? 2 : 1;
  return `${at(0.5).toFixed(digits)} (${at(0.25).toFixed(digits)}–${at(0.75).toFixed(digits)})`;
}

const slices = Number(arg('slices') ?? 30);
const ms = Number(arg('ms') ?? 20);
console.log(`uptime before: ${uptime()}`);
console.log(`NODE_ENV=${process.env.NODE_ENV ?? '(unset: graphql-js development checks on)'}`);
for (const c of CASES) {
  const ours = cached.estimate({ query: c.query, variables: c.variables });
  const theirs = getComplexity({ schema, query: documents.get(c)!, variables: c.variables, estimators });
  const shown = ours.ok ? `cost ${ours.cost} (field ${ours.fieldCost}, type ${ours.typeCost})` : 'refused';
  console.log(`${c.name}: sluice ${shown}; graphql-query-complexity ${theirs}`);
}
const results = new Map<string, number[]>();
// Cold contenders take turns among themselves, cached ones among themselves: each slice's garbage is of the
// same kind as its neighbours', whoever's collection pays for it.
const groups = [contenders.slice(0, 3), contenders.slice(3)];
for (const c of CASES) {
  for (const group of groups) {
    const operations = new Map(group.map((contender) => [contender, calibrate(contender, c, ms)]));
    for (let slice = 0; slice < slices; slice++) {
      for (const contender of rotate(group, slice)) {
        const key = `${c.name}\u0000${contender.name}`;
        results.set(key, [...(results.get(key) ?? []), measure(contender, c, operations.get(contender)!)]);
      }
    }
  }
}
const of = (c: Case, name: string) => results.get(`${c.name}\u0000${name}`)!;
console.log(
  `\nCPU µs per operation, median (interquartile range) over ${slices} slices of ~${ms} ms, each contender in turn, Node ${process.version}`,
);
console.log(`| query | ${contenders.map((c) => c.name).join(' | ')} |`);
console.log(`|---|${contenders.map(() => '---').join('|')}|`);
for (const c of CASES) {
  console.log(
    `| ${c.name} | ${contenders.map((contender) => quartiles(of(c, contender.name))).join(' | ')} |`,
  );
}
const excess = (c: Case, name: string) => of(c, name).map((us, slice) => us - of(c, BASELINE)[slice]!);
console.log(
  '\nCPU µs per operation added to parse + validate by the cold analysis, per slice, median (interquartile range)',
);
console.log('| query | sluice cold | gqc cold |');
console.log('|---|---|---|');
for (const c of CASES) {
  console.log(`| ${c.name} | ${quartiles(excess(c, SLUICE_COLD))} | ${quartiles(excess(c, GQC_COLD))} |`);
}
console.log(`uptime after: ${uptime()}`);
