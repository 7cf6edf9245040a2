/**
 * Server CPU per request that @sluice/graphql adds to Apollo Server 5 (on node:http, `startStandaloneServer`) and
 * to Mercurius 16 (on Fastify 5), each against the same server alone:
 * `npx tsx bench/graphql-server.ts [--rounds=5] [--duration=3] [--connections=32] [--before=<rev>] [--floor]
 * [--cpu-prof=<dir>]`.
 *
 * Four servers (Apollo alone, Apollo with `apolloCostBudget`, Mercurius alone, Mercurius with
 * `mercuriusCostBudget`), each a child pinned to the server CPU, the same schema (annotated with the IBM cost
 * directives), resolvers and queries; autocannon on the other CPU POSTs three queries in turn, each request with
 * one of 10,000 API keys. With Sluice every operation is priced (a cached estimate), reserved against its key's
 * budget (GCRA, MemoryStore, so large that nothing is refused) and settled to its actual cost, and answers
 * `extensions.cost`. `--before=<rev>` adds the two plugins as they were at that revision (same core), so that a
 * change is measured against its past in one run; `--floor` adds each server with, by hand, the least any
 * budget does per operation (one check, one settle, the RateLimit fields, `extensions.cost`): what is left above
 * it is the plugin's own. `--cpu-prof=<dir>`: each server writes its CPU profile there as it stops. Rounds are
 * interleaved, each starting with another server (the machine drifts over minutes); each figure is the median
 * over rounds (min–max), with `uptime` before and after.
 *
 * The children run compiled JavaScript under NODE_ENV=production, as servers do: @sluice/core and
 * @sluice/graphql built by scripts/build-package.mjs (tsc), this file and a past revision's plugin compiled by
 * tsc to bench/dist/graphql-server. Under tsx, esbuild's keepNames wrapper would tax every closure Sluice creates
 * (the servers are plain JavaScript), and graphql-js would add its development checks to every server.
 */
import { type ChildProcess, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { LOAD_CPU, nextMessage, SERVER_CPU, spawnPinned } from './lib/children.js';
import { rotate, showSpread, spread } from './lib/stats.js';

/**
 * Which server, and what it runs per operation: nothing (`alone`), the compiled plugin (`sluice`), or by hand
 * the least any budget does (`floor`): one check and one settle of the limiter, the RateLimit fields and
 * `extensions.cost`, nothing priced.
 */
interface ServerRole {
  readonly server: 'apollo' | 'mercurius';
  /** The folder of a compiled @sluice/graphql (its index.js, apollo.js, mercurius.js); else its SDL only. */
  readonly plugin: string;
  readonly mode: 'alone' | 'sluice' | 'floor';
}

/** A compiled plugin to measure, and how its rows are named. */
interface Plugin {
  readonly name: string;
  readonly dir: string;
}

/** The plugin's entries, loaded from a compiled folder (types only: nothing here imports the sources). */
type GraphqlEntry = typeof import('@sluice/graphql');
type ApolloEntry = typeof import('@sluice/graphql/apollo');
type MercuriusEntry = typeof import('@sluice/graphql/mercurius');
type Decision = import('@sluice/core').Decision;
type FormattedExecutionResult = import('graphql').FormattedExecutionResult;
type ApolloServerPlugin = import('@apollo/server').ApolloServerPlugin;
type FastifyInstance = import('fastify').FastifyInstance;
type MercuriusContext = import('mercurius').MercuriusContext;

/** One run of the load child. */
interface LoadJob {
  readonly url: string;
  readonly connections: number;
  readonly durationS: number;
}

interface LoadResult {
  readonly rps: number;
  readonly total: number;
  readonly non2xx: number;
  readonly errors: number;
}

const ROLE = process.env.GRAPHQL_BENCH_ROLE;
const KEYS = 10_000;

/** The schema, after the cost directives' SDL (from the plugin under test). */
const schemaSdl = (directives: string) => `${directives}
type Query {
  books(first: Int!): [Book!]! @listSize(slicingArguments: ["first"])
  search(term: String!): [Book!]! @listSize(assumedSize: 5)
}
type Book {
  id: ID!
  title: String!
  author: Author @cost(weight: "2")
}
type Author {
  name: String!
}
`;

/** The three operations the load sends in turn, as JSON bodies. */
const BODIES = [
  {
    query: 'query Books($first: Int!) { books(first: $first) { id title author { name } } }',
    variables: { first: 10 },
  },
  { query: '{ search(term: "sluice") { title } }' },
  { query: 'query One { books(first: 1) { title } }', operationName: 'One' },
].map((body) => JSON.stringify(body));

const book = (i: number) => ({ id: String(i), title: `Book ${i}`, author: { name: `Author ${i}` } });
const resolvers = {
  Query: {
    books: (_: unknown, { first }: { first: number }) => Array.from({ length: first }, (_x, i) => book(i)),
    search: () => Array.from({ length: 5 }, (_x, i) => book(i)),
  },
};

/** An entry of the compiled plugin in `dir`. */
function entry<T>(dir: string, name: string): Promise<T> {
  return import(pathToFileURL(join(dir, `${name}.js`)).href) as Promise<T>;
}

/** A budget nothing exceeds: every operation is reserved and settled, none refused. */
async function budget(plugin: string, sdl: string) {
  const { compileRules, createLimiter, MemoryStore } = await import('@sluice/core');
  const { costEstimator } = await entry<GraphqlEntry>(plugin, 'index');
  const { buildSchema } = await import('graphql');
  const rule = {
    name: 'graphql_points',
    key: ['api_key'],
    algorithm: 'gcra' as const,
    limit: { requests: 1_000_000_000, per: '60s' },
    cost: { descriptor: 'graphql_cost', max: 100_000 },
    settle: true,
  };
  return {
    estimator: costEstimator(buildSchema(sdl)),
    limiter: createLimiter({ rules: compileRules({ rules: [rule] }), store: new MemoryStore() }),
  };
}

const FLOOR_LABEL = 'check, settle, RateLimit fields and extensions.cost by hand';

/** What the floor charges and settles each operation, and answers in `extensions.cost`. */
const FLOOR_COST = { requested: 30, actual: 20 };

/** The floor's per-operation work, whatever the server: decide, then settle and describe. */
async function floorBudget(plugin: string, sdl: string) {
  const { limiter } = await budget(plugin, sdl);
  const { rateLimitHeaders } = await import('@sluice/core/http');
  return {
    async decide(apiKey: string | undefined) {
      const decision = await limiter.check({
        api_key: apiKey ?? '',
        graphql_cost: String(FLOOR_COST.requested),
      });
      return { decision, fields: rateLimitHeaders(decision, 'draft') };
    },
    async settle(decision: Decision) {
      await limiter.settle(decision, FLOOR_COST.actual);
      const result = decision.results[0];
      const throttleStatus = {
        maximumAvailable: result?.limit ?? 0,
        currentlyAvailable: (result?.remaining ?? 0) + FLOOR_COST.requested - FLOOR_COST.actual,
        restoreRate: 1,
      };
      return {
        requestedQueryCost: FLOOR_COST.requested,
        actualQueryCost: FLOOR_COST.actual,
        throttleStatus,
      };
    },
  };
}

async function mercuriusFloor(app: FastifyInstance, plugin: string, sdl: string): Promise<void> {
  const floor = await floorBudget(plugin, sdl);
  const decided = Symbol('decision');
  type Carrier = MercuriusContext & { [decided]?: Decision };
  app.graphql.addHook('preExecution', async (_schema, _document, context) => {
    const key = context.reply.request.headers['x-api-key'];
    const { decision, fields } = await floor.decide(Array.isArray(key) ? key[0] : key);
    (context as Carrier)[decided] = decision;
    for (const name in fields) context.reply.header(name, fields[name]);
  });
  app.graphql.addHook('onResolution', async (execution, context) => {
    const decision = (context as Carrier)[decided];
    if (decision !== undefined) execution.extensions = { cost: await floor.settle(decision) };
  });
}

async function apolloFloor(plugin: string, sdl: string): Promise<ApolloServerPlugin> {
  const floor = await floorBudget(plugin, sdl);
  return {
    async requestDidStart() {
      let decided: Awaited<ReturnType<typeof floor.decide>> | undefined;
      return {
        async didResolveOperation(rc) {
          decided = await floor.decide(rc.request.http?.headers.get('x-api-key'));
        },
        async willSendResponse(rc) {
          if (decided === undefined || rc.response.body.kind !== 'single') return;
          for (const name in decided.fields)
            rc.response.http.headers.set(name, decided.fields[name] as string);
          // A copy, as the plugin does: adding a field to Apollo's spread-made singleResult costs V8 a new map.
          const result: FormattedExecutionResult = Object.assign({}, rc.response.body.singleResult);
          result.extensions = { cost: await floor.settle(decided.decision) };
          rc.response.body.singleResult = result;
        },
      };
    },
  };
}

/** Starts one server on a free loopback port; answers its URL. */
async function serve({ server, plugin, mode }: ServerRole): Promise<string> {
  const { costDirectivesSdl } = await entry<GraphqlEntry>(plugin, 'index');
  const sdl = schemaSdl(costDirectivesSdl);
  if (server === 'apollo') {
    const { ApolloServer } = await import('@apollo/server');
    const { startStandaloneServer } = await import('@apollo/server/standalone');
    const plugins: ApolloServerPlugin[] = [];
    if (mode === 'sluice')
      plugins.push(
        (await entry<ApolloEntry>(plugin, 'apollo')).apolloCostBudget({
          ...(await budget(plugin, sdl)),
          descriptors: (rc) => ({ api_key: rc.request.http?.headers.get('x-api-key') }),
        }),
      );
    if (mode === 'floor') plugins.push(await apolloFloor(plugin, sdl));
    const apollo = new ApolloServer({ typeDefs: sdl, resolvers, plugins });
    const { url } = await startStandaloneServer(apollo, { listen: { port: 0, host: '127.0.0.1' } });
    return url;
  }
  const { default: Fastify } = await import('fastify');
  const { default: mercurius } = await import('mercurius');
  const app = Fastify();
  await app.register(mercurius, { schema: sdl, resolvers });
  if (mode === 'floor') await mercuriusFloor(app, plugin, sdl);
  if (mode === 'sluice') {
    const { mercuriusCostBudget } = await entry<MercuriusEntry>(plugin, 'mercurius');
    const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
    mercuriusCostBudget(app, {
      ...(await budget(plugin, sdl)),
      descriptors: (ctx) => ({ api_key: header(ctx.reply.request.headers['x-api-key']) }),
    });
  }
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  return `http://127.0.0.1:${port}/graphql`;
}

/** The server child: serves, says where, and answers `stats` with the CPU it has used. */
async function serverChild(role: ServerRole): Promise<void> {
  const url = await serve(role);
  process.on('message', () => {
    const { user, system } = process.cpuUsage();
    process.send?.({ type: 'stats', cpuMicros: user + system });
  });
  process.on('disconnect', () => process.exit(0));
  process.on('SIGINT', () => process.exit(0));
  process.send?.({ type: 'ready', url });
}

/** The load child: runs autocannon jobs, the three bodies in turn, a new API key each request. */
async function loadChild(): Promise<void> {
  const { default: autocannon } = await import('autocannon');
  let sequence = 0;
  process.on('message', async ({ id, job }: { id: number; job: LoadJob }) => {
    const result = await autocannon({
      url: job.url,
      connections: job.connections,
      duration: job.durationS,
      requests: [
        {
          method: 'POST',
          setupRequest: (request) => {
            const n = sequence++;
            const headers = { 'content-type': 'application/json', 'x-api-key': `key-${n % KEYS}` };
            return { ...request, headers, body: BODIES[n % BODIES.length] as string };
          },
        },
      ],
    });
    const answer: LoadResult = {
      rps: result.requests.total / result.duration,
      total: result.requests.total,
      non2xx: result.non2xx,
      errors: result.errors,
    };
    process.send?.({ id, result: answer });
  });
  process.on('disconnect', () => process.exit(0));
}

/** The next IPC message of `child` that `accept` takes, read as a record. */
function reply<T>(
  child: ChildProcess,
  accept: (message: Record<string, unknown>) => T | undefined,
): Promise<T> {
  return nextMessage(child, (message) => accept((message ?? {}) as Record<string, unknown>));
}

const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** Where the compiled bench and past plugins go (bench/dist is not tracked). */
const OUT = join(ROOT, 'bench/dist/graphql-server');
/** The working tree's plugin, as built by scripts/build-package.mjs. */
const CURRENT_PLUGIN = join(ROOT, 'packages/graphql/dist');
const TSC_FLAGS = ['--noCheck', '--skipLibCheck', '--types', 'node', '--target', 'ES2022'];
const MODULES = ['--module', 'NodeNext', '--moduleResolution', 'NodeNext'];

/** Compiles `files` (under `rootDir`) to `outDir` with tsc, without checking types (the repo's typecheck does). */
function compile(files: readonly string[], rootDir: string, outDir: string): void {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  rmSync(outDir, { recursive: true, force: true });
  const flags = [...TSC_FLAGS, ...MODULES, '--rootDir', rootDir, '--outDir', outDir];
  execFileSync(process.execPath, [tsc, ...flags, ...files], { cwd: ROOT, stdio: 'inherit' });
}

/**
 * @sluice/graphql at `rev` compiled to bench/dist/graphql-server/<sha> (its imports of @sluice/core and the
 * servers resolve through bench's and the root's node_modules: the working tree's core, built).
 */
function pastPlugin(rev: string): Plugin {
  const sha = execFileSync('git', ['rev-parse', '--short=12', rev], { cwd: ROOT }).toString().trim();
  const dir = join(OUT, sha);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execFileSync('sh', ['-c', `git archive ${sha} packages/graphql/src | tar -x -C ${dir}`], { cwd: ROOT });
  const source = join(dir, 'packages/graphql/src');
  const files = execFileSync('find', [source, '-name', '*.ts', '-not', '-name', '*.test.ts'])
    .toString()
    .trim()
    .split('\n');
  compile(files, source, join(dir, 'dist'));
  return { name: `@sluice/graphql ${rev}`, dir: join(dir, 'dist') };
}

/** Builds core and the plugin (tsc, as they ship), compiles this file for the children; answers its path. */
function prepare(): string {
  const build = join(ROOT, 'scripts/build-package.mjs');
  execFileSync(process.execPath, [build], { cwd: join(ROOT, 'packages/graphql'), stdio: 'inherit' });
  compile(['bench/graphql-server.ts'], join(ROOT, 'bench'), join(OUT, 'bench'));
  const script = join(OUT, 'bench/graphql-server.js');
  if (!existsSync(script)) throw new Error(`tsc wrote no ${script}`);
  return script;
}

/** A child running the compiled `script` in `role` on `cpu`, with plain node in production mode. */
function spawnRole(
  script: string,
  cpu: number,
  role: object | 'load',
  flags: readonly string[] = [],
): ChildProcess {
  const env = { GRAPHQL_BENCH_ROLE: JSON.stringify(role), NODE_ENV: 'production' };
  return spawnPinned(cpu, 'graphql-server', env, script, flags);
}

/** Throws unless `url` answers a query with its data, and with `extensions.cost` exactly when Sluice is on. */
async function expectAnswer(url: string, role: ServerRole): Promise<void> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'key-0' },
    body: BODIES[0] as string,
  });
  const body = (await response.json()) as {
    data?: unknown;
    extensions?: { cost?: { requestedQueryCost?: number } };
  };
  const cost = body.extensions?.cost?.requestedQueryCost;
  if (response.status !== 200 || body.data == null || (cost !== undefined) !== (role.mode !== 'alone'))
    throw new Error(
      `${role.server} (plugin: ${role.plugin}) answered ${response.status} ${JSON.stringify(body)}`,
    );
}

/** One server measured. */
interface Contender {
  readonly label: string;
  readonly role: ServerRole;
  readonly child: ChildProcess;
  readonly url: string;
  /** Server CPU µs per request and requests a second, one per round. */
  readonly micros: number[];
  readonly rps: number[];
  failed: number;
}

/** The four servers; two more for a past revision's plugin, two more for the floor. */
function rolesOf(plugins: readonly Plugin[], floor: boolean): { role: ServerRole; label: string }[] {
  const servers = [
    { server: 'apollo', name: 'Apollo Server' },
    { server: 'mercurius', name: 'Mercurius' },
  ] as const;
  return servers.flatMap(({ server, name }) => [
    { role: { server, plugin: CURRENT_PLUGIN, mode: 'alone' as const }, label: `${name} alone` },
    ...(floor
      ? [
          {
            role: { server, plugin: CURRENT_PLUGIN, mode: 'floor' as const },
            label: `${name} + ${FLOOR_LABEL}`,
          },
        ]
      : []),
    ...plugins.map((plugin) => ({
      role: { server, plugin: plugin.dir, mode: 'sluice' as const },
      label: `${name} + ${plugin.name}`,
    })),
  ]);
}

/** Stops a server child by its pid (SIGINT: it exits cleanly, and writes its CPU profile when asked to). */
function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGINT');
  });
}

/** `uptime`, for the record: figures from a busy machine are preliminary. */
const uptime = (): string => execFileSync('uptime').toString().trim();

async function main(): Promise<void> {
  const value = (name: string) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1];
  const rounds = Number(value('rounds') ?? 5);
  const durationS = Number(value('duration') ?? 3);
  const connections = Number(value('connections') ?? 32);
  const before = value('before');
  // --cpu-prof=<dir>: each server writes its CPU profile there when it stops (node --cpu-prof).
  const profile = value('cpu-prof');
  const script = prepare();
  const plugins = [
    { name: '@sluice/graphql', dir: CURRENT_PLUGIN },
    ...(before === undefined ? [] : [pastPlugin(before)]),
  ];
  const uptimeBefore = uptime();
  const load = spawnRole(script, LOAD_CPU, 'load');
  let jobs = 0;
  const run = (job: LoadJob): Promise<LoadResult> => {
    const id = jobs++;
    const answer = reply(load, (m) => (m.id === id ? (m.result as LoadResult) : undefined));
    load.send({ id, job });
    return answer;
  };
  const cpuOf = (child: ChildProcess): Promise<number> => {
    const answer = reply(child, (m) => (m.type === 'stats' ? (m.cpuMicros as number) : undefined));
    child.send('stats');
    return answer;
  };
  const contenders: Contender[] = [];
  for (const { role, label } of rolesOf(plugins, process.argv.includes('--floor'))) {
    const child = spawnRole(
      script,
      SERVER_CPU,
      role,
      profile === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profile}`],
    );
    const url = await reply(child, (m) => (m.type === 'ready' ? (m.url as string) : undefined));
    await expectAnswer(url, role);
    contenders.push({ label, role, child, url, micros: [], rps: [], failed: 0 });
    // Warm-up: the JIT settles, and the estimator has every document cached, before anything is measured.
    await run({ url, connections, durationS: 2 });
  }
  for (let round = 0; round < rounds; round++) {
    for (const contender of rotate(contenders, round)) {
      const cpuBefore = await cpuOf(contender.child);
      const result = await run({ url: contender.url, connections, durationS });
      const cpuAfter = await cpuOf(contender.child);
      contender.micros.push((cpuAfter - cpuBefore) / Math.max(1, result.total));
      contender.rps.push(result.rps);
      contender.failed += result.non2xx + result.errors;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  }
  await Promise.all(contenders.map(({ child }) => stopped(child)));
  load.kill('SIGINT');
  report(contenders, { rounds, durationS, connections, uptimeBefore, uptimeAfter: uptime() });
}

function report(
  contenders: readonly Contender[],
  run: { rounds: number; durationS: number; connections: number; uptimeBefore: string; uptimeAfter: string },
): void {
  console.log(
    `\nGraphQL servers, server CPU per request (${run.rounds} rounds of ${run.durationS} s, ${run.connections} connections, Node.js ${process.versions.node}, NODE_ENV=production)`,
  );
  console.log(`uptime before: ${run.uptimeBefore}\nuptime after:  ${run.uptimeAfter}\n`);
  console.log('| server | µs/request | added µs/request | req/s | req/s ratio | failed |');
  console.log('|---|---|---|---|---|---|');
  const by = (values: number[], base: number[] | undefined, combine: (a: number, b: number) => number) =>
    base === undefined ? [] : values.map((figure, round) => combine(figure, base[round] ?? Number.NaN));
  for (const contender of contenders) {
    const { server, mode } = contender.role;
    const alone = contenders.find((one) => one.role.server === server && one.role.mode === 'alone');
    const added = mode === 'alone' ? [] : by(contender.micros, alone?.micros, (a, b) => a - b);
    const ratio = mode === 'alone' ? [] : by(contender.rps, alone?.rps, (a, b) => a / b);
    console.log(
      `| ${contender.label} | ${showSpread(spread(contender.micros), 1)} | ${showSpread(spread(added), 1)} | ${showSpread(spread(contender.rps), 0)} | ${showSpread(spread(ratio), 2)} | ${contender.failed} |`,
    );
  }
}

if (ROLE === undefined) await main();
else if (ROLE === '"load"') await loadChild();
else await serverChild(JSON.parse(ROLE) as ServerRole);
