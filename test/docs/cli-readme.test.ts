/**
 * The CLI README's sessions come from running: each ```console block of packages/cli/README.md is replayed, its
 * `$ sluice ...` commands run with the built bin (`node packages/cli/dist/bin.js`, stdout and stderr in one
 * stream, as a terminal shows them) in a temporary directory holding the files they read, and what each prints
 * must be what the block shows under it. Values that change from run to run (times, ids, the dashboard's token,
 * the private Redis's URL, the directory) are masked on both sides; a line `...` stands for lines the block cuts;
 * `# exit N` at the end of a command's output is its exit code, 0 when not written.
 *
 * A block's files are test/docs/fixtures/cli/ (what the README does not show), the repository's own example rules
 * and test fixtures, or generated (the replay block's gzip logs, by test/ops/fixtures/make-logs.ts). Redis blocks
 * run against a redis-server of their own, the README's `redis://redis.internal:6379` standing for it.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { createLimiter, resolveRules } from '@sluice/core';
import { RedisStore } from '@sluice/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../scripts/docs/options.js';
import { combinedLine, fakeRequests } from '../ops/fixtures/make-logs.js';
import { type RedisServer, ready, redisCli, startRedis } from '../support/redis.js';
import { type Mask, masked, showsElided, transcriptSteps } from '../support/transcript.js';

const README = 'packages/cli/README.md';
const BIN = join(ROOT, 'packages/cli/dist/bin.js');
const FIXTURES = 'test/docs/fixtures/cli';
const EXAMPLE_RULES = 'examples/public-api/rules.yaml';
const REPLAY_RULES = 'test/ops/fixtures/replay/rules.yaml';
/** The Redis the README's commands name; the test's own server stands in for it. */
const README_REDIS = 'redis://redis.internal:6379';

/**
 * Blocks not replayed, each with why. Strict: a listed block that now replays as shown fails the test, so the
 * list only shrinks.
 */
const LEFT_OUT: Record<string, string> = {
  'top --redis':
    "the rates, counts and store call times are live gateways' (a load running while it draws), never the same twice",
};

/** What a block's commands read: files (name in the run's directory -> repository path), Redis, state made first. */
interface Setup {
  readonly files?: Readonly<Record<string, string>>;
  readonly redis?: true;
  /** Writes generated files into the run's directory, or state into Redis (its URL), before the commands. */
  readonly prepare?: (dir: string, redisUrl: string) => Promise<void>;
  /** The command serves until stopped: stopped with SIGINT once it printed as many lines as the block shows. */
  readonly serves?: true;
}

/** Each block by its first command's first two words after `sluice`. */
const SETUPS: Record<string, Setup> = {
  'replay access.log': {
    files: Object.fromEntries(
      ['rules.yaml', 'access.log', 'blocked.txt', 'partners.txt'].map((name) => [
        name,
        `${FIXTURES}/lists/${name}`,
      ]),
    ),
  },
  'validate broken.yaml': {
    files: { 'rules.yaml': EXAMPLE_RULES, 'broken.yaml': `${FIXTURES}/broken.yaml` },
  },
  'validate indent.yaml': { files: { 'indent.yaml': `${FIXTURES}/indent.yaml` } },
  'valdate rules.yaml': { files: { 'rules.yaml': EXAMPLE_RULES } },
  'explain rules.yaml': { files: { 'rules.yaml': EXAMPLE_RULES } },
  'test rules.yaml': { files: { 'rules.yaml': EXAMPLE_RULES, 'cases.yaml': `${FIXTURES}/cases.yaml` } },
  'report decisions.jsonl': { files: { 'decisions.jsonl': `${FIXTURES}/decisions.jsonl` } },
  'replay nginx/access.log.2.gz': { files: { 'rules.yaml': REPLAY_RULES }, prepare: gatewayLogs },
  'simulate --rules': { files: { 'rules.yaml': REPLAY_RULES } },
  'capacity --rules': { files: { [EXAMPLE_RULES]: EXAMPLE_RULES } },
  'push rules.yaml': { files: { 'rules.yaml': EXAMPLE_RULES }, redis: true },
  'unban rules.yaml': { files: { 'rules.yaml': `${FIXTURES}/bans.yaml` }, redis: true, prepare: banned },
  'push v1.yaml': {
    files: { 'v1.yaml': `${FIXTURES}/v1.yaml`, 'v2.yaml': `${FIXTURES}/v2.yaml` },
    redis: true,
  },
  'docs rules.yaml': { files: { 'rules.yaml': EXAMPLE_RULES } },
  'openapi rules.yaml': {
    files: { 'rules.yaml': EXAMPLE_RULES, 'openapi.yaml': `${FIXTURES}/openapi.yaml` },
  },
  'dashboard --redis': { redis: true, serves: true },
};

/** The replay block's two gateways' logs: make-logs.ts's 4,000 requests, alternately to each, gzipped. */
async function gatewayLogs(dir: string): Promise<void> {
  const lines = fakeRequests(4000, 15).map(combinedLine);
  for (const [index, file] of ['nginx/access.log.2.gz', 'gw2/access.log.2.gz'].entries()) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    const own = lines.filter((_, i) => i % 2 === index);
    writeFileSync(join(dir, file), gzipSync(`${own.join('\n')}\n`));
  }
}

/** The unban block's ban: a gateway on that Redis refusing 203.0.113.9's login attempts until login_per_ip bans it. */
async function banned(dir: string, redisUrl: string): Promise<void> {
  const client = new Redis(redisUrl);
  await ready(client);
  try {
    const limiter = createLimiter({
      rules: await resolveRules(join(dir, 'rules.yaml')),
      store: new RedisStore({ client }),
      logger: { warn: () => {} },
    });
    const outcomes: string[] = [];
    for (let i = 0; i < 11; i++) {
      const decision = await limiter.check({ route: '/login', ip: '203.0.113.9' });
      outcomes.push(decision.allowed ? 'allowed' : decision.reason);
    }
    expect(outcomes.at(-1), 'the unban block needs a ban to lift').toBe('ban');
  } finally {
    client.disconnect();
  }
}

/** What changes from run to run, as the comparison writes it on both sides. */
function masks(dir: string): Mask[] {
  return [
    [new RegExp(dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'g'), '<dir>'],
    [/\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z/g, '<time>'],
    [/"at":\d+/g, '"at":<ms>'],
    [/"id":"\d+-\d+"/g, '"id":"<id>"'],
    [/\?token=\S+/g, '?token=<token>'],
  ];
}

/** A ```console block of the README: where it starts and its text. */
interface Block {
  readonly id: string;
  readonly line: number;
  readonly text: string;
}

function consoleBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```console') continue;
    const end = lines.indexOf('```', i + 1);
    const text = lines.slice(i + 1, end).join('\n');
    const first = transcriptSteps(text)[0]?.command ?? '';
    blocks.push({ id: first.split(' ').slice(1, 3).join(' '), line: i + 1, text });
    i = end;
  }
  return blocks;
}

/** A command's words: plain words only (a quote or a shell operator would need a shell, and fails here). */
function words(command: string): string[] {
  if (/["'`|&;<>$]/.test(command))
    throw new Error(`a README command the test cannot run without a shell: ${command}`);
  return command.split(' ').filter(Boolean);
}

/** `# exit N` closing a command's output: the code, and the output without it. */
function exitOf(output: string): { output: string; code: number } {
  const lines = output.split('\n');
  let code = 0;
  const plain = lines.map((line) => {
    const match = /^(.*?)\s+# exit (\d+)$/.exec(line);
    if (match === null) return line;
    code = Number(match[2]);
    return match[1] ?? '';
  });
  return { output: plain.join('\n'), code };
}

/** Runs the bin with `args` in `dir`; stdout and stderr through one file, in the order written. */
async function sluice(
  args: readonly string[],
  dir: string,
  stopAfterLines?: number,
): Promise<{ code: number | null; printed: string }> {
  const outFile = `${dir}.out`;
  const fd = openSync(outFile, 'w');
  const child: ChildProcess = spawn(process.execPath, [BIN, ...args], {
    cwd: dir,
    stdio: ['ignore', fd, fd],
    env: { ...process.env, NO_COLOR: '1' },
  });
  closeSync(fd);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const printed = () => readFileSync(outFile, 'utf8');
  if (stopAfterLines !== undefined) {
    const deadline = Date.now() + 20_000;
    while (
      printed().trimEnd().split('\n').length < stopAfterLines &&
      Date.now() < deadline &&
      child.exitCode === null
    )
      await new Promise((resolve) => setTimeout(resolve, 50));
    child.kill('SIGINT');
  }
  const code = await exited;
  const out = printed();
  rmSync(outFile, { force: true });
  return { code, printed: out.trimEnd() };
}

const blocks = consoleBlocks(readFileSync(join(ROOT, README), 'utf8'));

describe(`${README}: each console session, replayed`, () => {
  let redis: RedisServer | undefined;
  let redisUrl = '';
  const work = mkdtempSync(join(tmpdir(), 'sluice-cli-readme-'));

  beforeAll(async () => {
    // The bin and the packages it loads, built unless dist is newer than every source (as prepack does).
    const build = spawnSync(process.execPath, [join(ROOT, 'scripts/build-package.mjs'), '--unless-fresh'], {
      cwd: join(ROOT, 'packages/cli'),
      encoding: 'utf8',
    });
    if (build.status !== 0) throw new Error(`building @sluice/cli failed:\n${build.stdout}${build.stderr}`);
    redis = await startRedis();
    redisUrl = `redis://${redis.host}:${redis.port}`;
  }, 180_000);
  afterAll(async () => {
    await redis?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('finds the 17 blocks, each with its setup or a reason to be left out, and no setup without its block', () => {
    const ids = blocks.map((block) => block.id);
    expect(ids.length).toBe(17);
    expect(new Set(ids).size, 'two blocks start with the same command').toBe(ids.length);
    expect(ids.filter((id) => SETUPS[id] === undefined && LEFT_OUT[id] === undefined)).toEqual([]);
    expect([...Object.keys(SETUPS), ...Object.keys(LEFT_OUT)].filter((id) => !ids.includes(id))).toEqual([]);
    expect(ids.filter((id) => SETUPS[id] !== undefined && LEFT_OUT[id] !== undefined)).toEqual([]);
  });

  /** Replays a block: each command's output, masked, against what the block shows; a diff on the first mismatch. */
  async function replay(
    block: Block,
    setup: Setup,
  ): Promise<{ printed: string; shown: string; same: boolean }> {
    const dir = mkdtempSync(join(work, `${block.line}-`));
    for (const [name, source] of Object.entries(setup.files ?? {})) {
      mkdirSync(dirname(join(dir, name)), { recursive: true });
      copyFileSync(join(ROOT, source), join(dir, name));
    }
    if (setup.redis) await redisCli(redis!.port, 'FLUSHALL');
    await setup.prepare?.(dir, redisUrl);
    const hide = masks(dir);
    const printedAll: string[] = [];
    const shownAll: string[] = [];
    let same = true;
    for (const step of transcriptSteps(block.text)) {
      const [name, ...args] = words(step.command.replaceAll(README_REDIS, redisUrl));
      expect(name, `${README}:${block.line}`).toBe('sluice');
      const { output, code } = exitOf(step.output);
      const run = await sluice(args, dir, setup.serves ? output.split('\n').length : undefined);
      const printed = masked(run.printed.replaceAll(redisUrl, README_REDIS), hide);
      const shown = masked(output, hide);
      printedAll.push(`$ ${step.command}`, printed, `(exit ${run.code})`);
      shownAll.push(`$ ${step.command}`, shown, `(exit ${code})`);
      same &&= run.code === code && showsElided(printed, shown);
    }
    return { printed: printedAll.join('\n'), shown: shownAll.join('\n'), same };
  }

  const replayed = blocks.filter((block) => SETUPS[block.id] !== undefined);
  it.each(replayed.map((block) => [`${README}:${block.line} (${block.id})`, block] as const))(
    '%s prints what it shows',
    { timeout: 60_000 },
    async (where, block) => {
      const { printed, shown, same } = await replay(block, SETUPS[block.id]!);
      // On a mismatch, the whole session side by side (a `...` line of the block matches any lines).
      if (!same) expect(printed, where).toBe(shown);
    },
  );

  const leftOut = blocks.filter((block) => LEFT_OUT[block.id] !== undefined);
  it.each(leftOut.map((block) => [`${README}:${block.line} (${block.id})`, block] as const))(
    '%s is left out: its output cannot be the same twice',
    async (where, block) => {
      console.log(`${where}: left out: ${LEFT_OUT[block.id]}`);
      const { same } = await replay(block, { redis: true }).catch(() => ({ same: false }));
      expect(same, `${where} now replays as shown: remove it from LEFT_OUT`).toBe(false);
    },
  );
});
