/**
 * Redis state without number text (issue 46): what RedisStore's `stateFormat: 'binary'` saves Redis per check.
 * The working tree's scripts (the lean one-rule script of sliding_window, and the general script on the source's
 * two rules: a sliding_window key per API key and a token_bucket key for /search on half the requests) as they
 * write text and as they write binary (stateFormat.ts: a zero byte and doubles, `struct.pack`; both read both).
 * On a private redis-server, each variant its own keys (200,000 rotating tags, filled in an unreported first
 * round, so that every check reads a state of its own format), slices of CALLS script calls interleaved in a
 * rotated order; per check: redis-server's CPU (INFO cpu) and the script's time (INFO commandstats); binary / text
 * per round.
 * Run: npx tsx bench/redis-state-codec.ts [--rounds=7] [--calls=1500] [--checks=1,16]
 */

import type { Redis } from 'ioredis';
import { luaAlgorithms } from '../packages/redis/src/algorithms/index.js';
import { oneRuleArgv, oneRuleScript } from '../packages/redis/src/oneRuleScript.js';
import { EVALUATE_SCRIPT } from '../packages/redis/src/script.js';
import type { Group } from '../packages/redis/src/scriptCall.js';
import { evaluateArgv } from '../packages/redis/src/scriptCall.js';
import { writing } from '../packages/redis/src/stateFormat.js';
import { redisScript } from '../packages/redis/src/transport.js';
import { startBenchRedis } from './lib/redis.js';
import { rotate, showSpread, spread } from './lib/stats.js';

const args = new Map(
  process.argv.slice(2).map((arg) => {
    const [name = '', value = ''] = arg.replace(/^--/, '').split('=');
    return [name, value];
  }),
);
const ROUNDS = Number(args.get('rounds') ?? 7);
const CALLS = Number(args.get('calls') ?? 1500);
const CHECKS = (args.get('checks') ?? '1,16').split(',').map(Number);
const IN_FLIGHT = 32;
const TAGS = 200_000;
/** The source's limits; every key's request rate far below them, so every check is allowed and writes. */
const PER_KEY = { limit: 600, windowMs: 60_000, burst: 600 };
const SEARCH = { limit: 1_000_000_000, windowMs: 1000, burst: 1_000_000_000 };

const tag = (n: number) => `k${(n % TAGS).toString(36).padStart(8, '0')}`;

/** A row: its calls by variant, `checks` requests per call, and how many checks a request makes. */
interface Row {
  readonly name: string;
  readonly checksPerRequest: number;
  call(variant: 'text' | 'binary', requests: number, n: number): [string, (string | number)[]];
}

async function rows(load: (lua: string) => Promise<string>): Promise<Row[]> {
  const sw = luaAlgorithms.sliding_window;
  const lean = oneRuleScript(sw);
  const general = redisScript('Evaluate', EVALUATE_SCRIPT);
  const leanSha = { text: await load(lean.lua), binary: await load(writing(lean, 'binary').lua) };
  const generalSha = { text: await load(general.lua), binary: await load(writing(general, 'binary').lua) };
  const check = (rule: string, t: string, algorithm: 'sliding_window' | 'token_bucket') => ({
    rule,
    tag: t,
    algorithm,
    params: algorithm === 'sliding_window' ? PER_KEY : SEARCH,
    cost: 1,
    mode: 'enforce' as const,
  });
  const groups = (requests: number, n: number, two: boolean): Group[] =>
    Array.from({ length: requests }, (_, i) => ({
      checks: [
        check('key_default', tag(n * requests + i), 'sliding_window'),
        ...(two && (n * requests + i) % 2 === 0 ? [check('search_global', 'all', 'token_bucket')] : []),
      ],
      now: Date.now(),
    }));
  return [
    {
      name: 'sliding_window, one-rule script',
      checksPerRequest: 1,
      call: (variant, requests, n) => [
        leanSha[variant],
        oneRuleArgv(groups(requests, n, false), sw, { prefix: variant, redisClock: false }),
      ],
    },
    {
      name: "the source's two rules, general script (1.5 checks per request)",
      checksPerRequest: 1.5,
      call: (variant, requests, n) => [
        generalSha[variant],
        evaluateArgv(groups(requests, n, true), { prefix: variant, redisClock: false }),
      ],
    },
  ];
}

/**
 * Each variant decides and stores: two requests on a fresh key are both allowed (a script that raised would
 * answer a failure and delete the key), and the key holds text, or a zero byte and three doubles.
 */
async function sane(admin: Redis, table: Row[]): Promise<void> {
  for (const row of table) {
    for (const variant of ['text', 'binary'] as const) {
      for (let i = 0; i < 2; i++) {
        const [sha, argv] = row.call(variant, 1, TAGS + 1);
        const reply = (await admin.evalsha(sha, ...(argv as [number, ...string[]]))) as unknown[];
        if (reply[0] !== 1) throw new Error(`${row.name}, ${variant}: not allowed: ${JSON.stringify(reply)}`);
      }
      const state = await admin.getBuffer(`${variant}:{${tag(TAGS + 1)}}:key_default:sw`);
      const ok =
        variant === 'text' ? /^\d+ \d+ \d+$/.test(String(state)) : state?.length === 25 && state[0] === 0;
      if (!ok) throw new Error(`${row.name}, ${variant}: state ${JSON.stringify(String(state))}`);
      await admin.del(`${variant}:{${tag(TAGS + 1)}}:key_default:sw`);
    }
  }
}

async function main(): Promise<void> {
  const redis = await startBenchRedis();
  try {
    const load = async (lua: string) => (await redis.admin.script('LOAD', lua)) as string;
    const table = await rows(load);
    const variants = ['text', 'binary'] as const;
    await sane(redis.admin, table);
    const samples = new Map<string, { cpu: number; script: number }[]>();
    const stats = async () => {
      const commands = await redis.admin.info('commandstats');
      const found = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(commands);
      return { cpu: await redis.cpuMicros(), usec: Number(found?.[2] ?? 0) };
    };
    // Round 0 fills every variant's keys over all the tags (unreported), so that later reads find a state.
    for (let round = 0; round <= ROUNDS; round++) {
      for (const row of table) {
        for (const requests of CHECKS) {
          for (const variant of rotate(variants, round)) {
            const calls = round === 0 ? Math.ceil(TAGS / requests) : CALLS;
            const before = await stats();
            let next = 0;
            const worker = async () => {
              while (next < calls) {
                const [sha, argv] = row.call(variant, requests, next++ + round * CALLS);
                await redis.admin.evalsha(sha, ...(argv as [number, ...string[]]));
              }
            };
            await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
            const after = await stats();
            const checks = calls * requests * row.checksPerRequest;
            const id = `${row.name}|${requests}|${variant}`;
            if (round > 0)
              samples.set(id, [
                ...(samples.get(id) ?? []),
                { cpu: (after.cpu - before.cpu) / checks, script: (after.usec - before.usec) / checks },
              ]);
          }
        }
      }
      process.stderr.write(`round ${round} done\n`);
    }
    console.log(
      `redis-server ${await redis.version()}, ${ROUNDS} rounds of ${CALLS} calls (${IN_FLIGHT} in flight), ${TAGS} keys; ` +
        'µs per check, medians (min–max); binary / text per round\n',
    );
    console.log(
      '| script | requests per call | text: Redis CPU / script | binary: Redis CPU / script | binary / text: CPU, script |',
    );
    console.log('|---|---|---|---|---|');
    for (const row of table) {
      for (const requests of CHECKS) {
        const [text, binary] = variants.map((v) => samples.get(`${row.name}|${requests}|${v}`)!) as [
          { cpu: number; script: number }[],
          { cpu: number; script: number }[],
        ];
        const cell = (s: { cpu: number; script: number }[]) =>
          `${showSpread(spread(s.map((x) => x.cpu)), 2)} / ${showSpread(spread(s.map((x) => x.script)), 2)}`;
        const ratio = (pick: (x: { cpu: number; script: number }) => number) =>
          showSpread(spread(text.map((t, i) => pick(binary[i]!) / pick(t))), 2);
        console.log(
          `| ${row.name} | ${requests} | ${cell(text)} | ${cell(binary)} | ${ratio((x) => x.cpu)}, ${ratio((x) => x.script)} |`,
        );
      }
    }
  } finally {
    await redis.stop();
  }
}

await main();
