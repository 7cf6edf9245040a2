import { parseDuration } from '@sluice/core';
import { countOption, type ParsedArgs, parseCommandArgs, stringOption } from '../args.js';
import { type Command, EXIT, UsageError } from '../io.js';
import { listHelp, listsOf } from '../lists.js';
import { startProgress } from '../progress.js';
import { printReplay } from '../replay/print.js';
import { createReplay } from '../replay/replayer.js';
import { ADAPTER_DEFAULTS } from '../replay/request.js';
import { renderReplayHtml } from '../report/replayHtml.js';
import { loadChecked } from '../rulesFile.js';
import { clientDescriptors } from '../simulate/clients.js';
import { PATTERNS, type PatternName, patternOf } from '../simulate/patterns.js';
import { seededRandom } from '../simulate/random.js';
import { runTraffic } from '../simulate/traffic.js';
import { parseDescriptors } from './explain.js';
import { REPORT_OPTIONS, replayOptions, writeHtml } from './replay.js';

/** Start of simulated time when `--start` is not given: fixed, so that runs compare. */
const DEFAULT_START = '2026-01-05T09:00:00Z';

function patternName(parsed: ParsedArgs): PatternName {
  const name = stringOption(parsed, 'pattern');
  if (name === undefined) throw new UsageError(`simulate needs --pattern (${PATTERNS.join(', ')})`);
  if (!(PATTERNS as readonly string[]).includes(name)) {
    throw new UsageError(`--pattern must be one of ${PATTERNS.join(', ')}, got "${name}"`);
  }
  return name as PatternName;
}

function durationOption(parsed: ParsedArgs): number {
  const text = stringOption(parsed, 'duration') ?? '10m';
  try {
    const ms = parseDuration(text);
    if (ms > 0) return ms;
  } catch {
    // Reported below with the option's name.
  }
  throw new UsageError(`--duration must be a duration such as 10m or 1h, got "${text}"`);
}

function startOption(parsed: ParsedArgs): number {
  const text = stringOption(parsed, 'start') ?? DEFAULT_START;
  const start = Date.parse(text);
  if (Number.isNaN(start)) throw new UsageError(`--start must be an ISO time, got "${text}"`);
  return start;
}

/** `sluice simulate`: synthetic traffic of a known shape through the rules, reported as a replay. */
export const simulateCommand: Command = {
  name: 'simulate',
  summary:
    'synthetic traffic (steady, burst, ramp, many keys, hot key, retry storm) through rules, as replay reports',
  help: `Usage: sluice simulate --rules <rules.yaml> --pattern <pattern> [descriptor=value]... [options]

Generates traffic of a known shape (Poisson arrivals, seeded) and runs it through the rules on in-memory counters
with simulated time, then prints the same report as \`sluice replay\`. Patterns:
  steady       --rps all along, clients picked uniformly
  burst        10x --rps for the middle tenth of the run
  ramp         from a tenth of --rps up to 3x --rps, linearly
  many-keys    every request from a new client
  hot-key      half of the requests from one client
  retry-storm  denied clients retry after 100-500 ms, ignoring Retry-After, up to 10 times

descriptor=value arguments are the same for every client (route=/search, auth=anonymous); the --vary names get
a value per client (ip: 10.x.y.z; api_key and others: <name>_<n>). Descriptors are built as an adapter builds them.

Options:
  --rules <file>       the rules (required)
  --pattern <name>     the traffic shape (required)
  --rps <n>            base requests per second over all clients; default 20
  --keys <n>           clients; default 100
  --duration <d>       simulated time: 30s, 10m, 1h; default 10m
  --vary <names>       comma-separated descriptors that differ per client; default ip,api_key
  --seed <n>           random seed; default 1
  --start <ISO time>   start of simulated time; default ${DEFAULT_START}
${listHelp(23)}
  --show-keys, --key-secret <s>, --top <n>, --html <file>, --json   as for sluice replay
  -h, --help           show this help

Exit codes: 0 simulated, 1 invalid rules, 2 usage error or a bad --list file.`,
  async run(args, io) {
    const parsed = parseCommandArgs(args, {
      ...REPORT_OPTIONS,
      pattern: { type: 'string' },
      rps: { type: 'string' },
      keys: { type: 'string' },
      duration: { type: 'string' },
      vary: { type: 'string' },
      seed: { type: 'string' },
      start: { type: 'string' },
    });
    const rulesPath = stringOption(parsed, 'rules');
    if (rulesPath === undefined) throw new UsageError('simulate needs --rules <rules.yaml>');
    const name = patternName(parsed);
    const settings = {
      rps: countOption(parsed, 'rps', 20),
      keys: countOption(parsed, 'keys', 100),
      durationMs: durationOption(parsed),
    };
    const fixed = parseDescriptors(parsed.positionals);
    const vary = (stringOption(parsed, 'vary') ?? 'ip,api_key').split(',').filter((v) => v !== '');
    const start = startOption(parsed);
    const random = seededRandom(countOption(parsed, 'seed', 1));
    const loaded = await loadChecked(rulesPath, io);
    if (typeof loaded === 'number') return loaded;
    const lists = await listsOf(parsed, [loaded.rules], 'simulate', io);
    if (typeof lists === 'number') return lists;
    const replay = createReplay(loaded.rules, { ...replayOptions(parsed), lists });
    const progress = startProgress(io, { label: `simulate ${name}`, unit: 'requests' });
    const counts = runTraffic(
      patternOf(name, settings),
      { start, durationMs: settings.durationMs, random, progress: progress.update },
      clientDescriptors(fixed, vary, ADAPTER_DEFAULTS),
      replay.add,
    );
    progress.end();
    const report = replay.finish();
    const retries = name === 'retry-storm' ? `, ${counts.retries} retries, ${counts.gaveUp} gave up` : '';
    const what = `simulated ${name} (${settings.rps}/s base, ${settings.keys} keys${retries})`;
    if (parsed.values.json === true)
      io.out(JSON.stringify({ pattern: name, ...settings, ...counts, report }, null, 2));
    else printReplay(io, report, what);
    const html = stringOption(parsed, 'html');
    if (html !== undefined && !(await writeHtml(io, html, renderReplayHtml(report, `Sluice ${what}`))))
      return EXIT.usage;
    return EXIT.ok;
  },
};
