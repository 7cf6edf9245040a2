/**
 * `sluice replay` speed and memory: a million nginx combined lines (the seeded generator the tests use) through
 * the replay test rules, plain and gzip, in process as the command runs them. Memory is sampled (after a full
 * GC) at a fifth of the log and at its end: a stream replay holds the keys it tracks, not the lines, so the two
 * are about equal. Run: node --expose-gc --import tsx bench/replay.ts [lines]
 */
import { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import {
  ADAPTER_DEFAULTS,
  createReplay,
  feedLogs,
  fieldMap,
  lineParser,
  type ReplayRequest,
} from '@sluice/cli';
import { compileRules, loadRules } from '@sluice/core';
import { combinedLine, fakeRequests } from '../test/ops/fixtures/make-logs.js';
import { RESULT_PREFIX } from './lib/micro.js';

const LINES = Number(process.argv[2] ?? 1_000_000);
const RULES = join(import.meta.dirname, '..', 'test', 'ops', 'fixtures', 'replay', 'rules.yaml');
const SILENT = { out: () => {}, err: () => {} };

/** Writes the log in chunks of generated requests, so the generator's memory stays small too. */
async function writeLog(path: string): Promise<void> {
  const out = createWriteStream(path);
  const chunk = 100_000;
  for (let done = 0; done < LINES; done += chunk) {
    // Each chunk is its own seeded three hours, shifted: a long log of the same traffic shape, in time order.
    const shift = (done / chunk) * 3 * 3_600_000;
    const lines = fakeRequests(Math.min(chunk, LINES - done), 15 + done).map((r) =>
      combinedLine({ ...r, time: r.time + shift }),
    );
    if (!out.write(`${lines.join('\n')}\n`))
      await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve) => out.end(() => resolve()));
}

function heapMb(): number {
  globalThis.gc?.();
  return Math.round(process.memoryUsage().heapUsed / 1e5) / 10;
}

interface Run {
  readonly seconds: number;
  /** CPU time of this process (user + system): steadier than wall time on a shared machine. */
  readonly cpuSeconds: number;
  readonly linesPerSecond: number;
  readonly heapAtFifthMb: number;
  readonly heapAtEndMb: number;
  readonly requests: number;
}

async function replay(path: string): Promise<Run> {
  const rules = compileRules(await loadRules(RULES));
  const replay = createReplay(rules);
  const parse = lineParser('auto', fieldMap(['api_key=extra.1', 'tenant=extra.2']), ADAPTER_DEFAULTS);
  let seen = 0;
  let heapAtFifth = 0;
  const sink = {
    add(request: ReplayRequest) {
      replay.add(request);
      if (++seen === Math.floor(LINES / 5)) heapAtFifth = heapMb();
    },
    skip: replay.skip,
  };
  const started = process.hrtime.bigint();
  const cpuBefore = process.cpuUsage();
  await feedLogs([path], parse, sink, SILENT);
  const cpu = process.cpuUsage(cpuBefore);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const heapAtEnd = heapMb();
  const report = replay.finish();
  return {
    seconds: Math.round(seconds * 10) / 10,
    cpuSeconds: Math.round((cpu.user + cpu.system) / 1e5) / 10,
    linesPerSecond: Math.round(LINES / seconds),
    heapAtFifthMb: heapAtFifth,
    heapAtEndMb: heapAtEnd,
    requests: report.requests,
  };
}

const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-replay-'));
try {
  const log = join(dir, 'access.log');
  await writeLog(log);
  writeFileSync(`${log}.gz`, gzipSync(readFileSync(log)));
  if (!globalThis.gc) console.log('(run with node --expose-gc for exact heap figures)');
  const plain = await replay(log);
  const gzip = await replay(`${log}.gz`);
  for (const [name, run] of [
    ['plain', plain],
    ['gzip', gzip],
  ] as const) {
    console.log(
      `${name}: ${run.requests.toLocaleString('en')} requests in ${run.seconds} s, ${run.cpuSeconds} s of CPU (${run.linesPerSecond.toLocaleString('en')} lines/s); heap ${run.heapAtFifthMb} MB at a fifth, ${run.heapAtEndMb} MB at the end`,
    );
  }
  console.log(`${RESULT_PREFIX}${JSON.stringify({ lines: LINES, plain, gzip, node: process.version })}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
