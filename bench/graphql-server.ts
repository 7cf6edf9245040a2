/**
 * Server CPU per request that @sluice/graphql adds to Apollo Server 5 (on node:http, `startStandaloneServer`) and
 * to Mercurius 16 (on Fastify 5), each against the same server alone:
 * `npx tsx bench/graphql-server.ts [--rounds=5] [--duration=3] [--connections=32]`.
 *
 * Four servers (Apollo alone, Apollo with `apolloCostBudget`, Mercurius alone, Mercurius with
 * `mercuriusCostBudget`), each a child pinned to the server CPU, the same schema (annotated with the IBM cost
 * directives), resolvers and queries; autocannon on the other CPU POSTs three queries in turn, each request with
 * one of 10,000 API keys. With Sluice every operation is priced (a cached estimate), reserved against its key's
 * budget (GCRA, MemoryStore, so large that nothing is refused) and settled to its actual cost, and answers
 * `extensions.cost`. Rounds are interleaved, each starting with another server (the machine drifts over minutes);
 * each figure is the median over rounds (min–max), with the load average before and after.
 */
import type { ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { costDirectivesSdl } from '@sluice/graphql';
import { LOAD_CPU, nextMessage, SERVER_CPU, spawnPinned } from './lib/children.js';
import { rotate, showSpread, spread } from './lib/stats.js';

/** Which server, with or without the budget. */
interface ServerRole {
  readonly server: 'apollo' | 'mercurius';
  readonly sluice: boolean;
}

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

const SDL = `${costDirectivesSdl}
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

/** A budget nothing exceeds: every operation is reserved and settled, none refused. */
async function budget() {
  const { compileRules, createLimiter, MemoryStore } = await import('@sluice/core');
  const { costEstimator } = await import('@sluice/graphql');
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
    estimator: costEstimator(buildSchema(SDL)),
    limiter: createLimiter({ rules: compileRules({ rules: [rule] }), store: new MemoryStore() }),
  };
}

/** Starts one server on a free loopback port; answers its URL. */
async function serve({ server, sluice }: ServerRole): Promise<string> {
  if (server === 'apollo') {
    const { ApolloServer } = await import('@apollo/server');
    const { startStandaloneServer } = await import('@apollo/server/standalone');
    const { apolloCostBudget } = await import('@sluice/graphql/apollo');
    const plugins = sluice
      ? [
          apolloCostBudget({
            ...(await budget()),
            descriptors: (rc) => ({ api_key: rc.request.http?.headers.get('x-api-key') }),
          }),
        ]
      : [];
    const apollo = new ApolloServer({ typeDefs: SDL, resolvers, plugins });
    const { url } = await startStandaloneServer(apollo, { listen: { port: 0, host: '127.0.0.1' } });
    return url;
  }
  const { default: Fastify } = await import('fastify');
  const { default: mercurius } = await import('mercurius');
  const { mercuriusCostBudget } = await import('@sluice/graphql/mercurius');
  const app = Fastify();
  await app.register(mercurius, { schema: SDL, resolvers });
  if (sluice) {
    const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
    mercuriusCostBudget(app, {
      ...(await budget()),
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

/** A child running this file in `role` on `cpu`, under the same loader (tsx) as this process. */
function spawnRole(cpu: number, role: object | 'load'): ChildProcess {
  const env = { GRAPHQL_BENCH_ROLE: JSON.stringify(role) };
  return spawnPinned(cpu, 'graphql-server', env, fileURLToPath(import.meta.url), process.execArgv);
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
  if (response.status !== 200 || body.data == null || (cost !== undefined) !== role.sluice)
    throw new Error(
      `${role.server} (sluice: ${role.sluice}) answered ${response.status} ${JSON.stringify(body)}`,
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

async function main(): Promise<void> {
  const value = (name: string) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1];
  const rounds = Number(value('rounds') ?? 5);
  const durationS = Number(value('duration') ?? 3);
  const connections = Number(value('connections') ?? 32);
  const loadBefore = loadavg();
  const roles: ServerRole[] = [
    { server: 'apollo', sluice: false },
    { server: 'apollo', sluice: true },
    { server: 'mercurius', sluice: false },
    { server: 'mercurius', sluice: true },
  ];
  const load = spawnRole(LOAD_CPU, 'load');
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
  for (const role of roles) {
    const child = spawnRole(SERVER_CPU, role);
    const url = await reply(child, (m) => (m.type === 'ready' ? (m.url as string) : undefined));
    const label = `${role.server === 'apollo' ? 'Apollo Server' : 'Mercurius'}${role.sluice ? ' + @sluice/graphql' : ' alone'}`;
    await expectAnswer(url, role);
    contenders.push({ label, role, child, url, micros: [], rps: [], failed: 0 });
    // Warm-up: the JIT settles, and the estimator has every document cached, before anything is measured.
    await run({ url, connections, durationS: 2 });
  }
  for (let round = 0; round < rounds; round++) {
    for (const contender of rotate(contenders, round)) {
      const before = await cpuOf(contender.child);
      const result = await run({ url: contender.url, connections, durationS });
      const after = await cpuOf(contender.child);
      contender.micros.push((after - before) / Math.max(1, result.total));
      contender.rps.push(result.rps);
      contender.failed += result.non2xx + result.errors;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  }
  for (const contender of contenders) contender.child.kill('SIGINT');
  load.kill('SIGINT');
  report(contenders, { rounds, durationS, connections, loadBefore, loadAfter: loadavg() });
}

function report(
  contenders: readonly Contender[],
  run: { rounds: number; durationS: number; connections: number; loadBefore: number[]; loadAfter: number[] },
): void {
  const load = (figures: number[]) => figures.map((figure) => figure.toFixed(2)).join(' ');
  console.log(
    `\nGraphQL servers, server CPU per request (${run.rounds} rounds of ${run.durationS} s, ${run.connections} connections, Node.js ${process.versions.node}); load average ${load(run.loadBefore)} before, ${load(run.loadAfter)} after`,
  );
  console.log('| server | µs/request | added µs/request | req/s | req/s ratio | failed |');
  console.log('|---|---|---|---|---|---|');
  for (const contender of contenders) {
    const alone = contenders.find((one) => one.role.server === contender.role.server && !one.role.sluice);
    const by = (values: number[], base: number[] | undefined, combine: (a: number, b: number) => number) =>
      base === undefined ? [] : values.map((figure, round) => combine(figure, base[round] ?? Number.NaN));
    const added = contender.role.sluice ? by(contender.micros, alone?.micros, (a, b) => a - b) : [];
    const ratio = contender.role.sluice ? by(contender.rps, alone?.rps, (a, b) => a / b) : [];
    console.log(
      `| ${contender.label} | ${showSpread(spread(contender.micros), 1)} | ${showSpread(spread(added), 1)} | ${showSpread(spread(contender.rps), 0)} | ${showSpread(spread(ratio), 2)} | ${contender.failed} |`,
    );
  }
}

if (ROLE === undefined) await main();
else if (ROLE === '"load"') await loadChild();
else await serverChild(JSON.parse(ROLE) as ServerRole);
