import { constants } from 'node:fs';
import { access, writeFile } from 'node:fs/promises';
import type { CompiledRules } from '@sluice/core/store';
import { countOption, listOption, type ParsedArgs, parseCommandArgs, stringOption } from '../args.js';
import { type Command, describeFsError, EXIT, type ExitCode, type Io, UsageError } from '../io.js';
import { LIST_OPTION, listHelp, listsOf } from '../lists.js';
import { createComparison } from '../replay/compare.js';
import { feedLogs, type RequestSink } from '../replay/feed.js';
import { fieldMap } from '../replay/fields.js';
import { LOG_FORMATS, type LogFormat, lineParser } from '../replay/logLine.js';
import { printComparison, printReplay } from '../replay/print.js';
import type { ReplayOptions } from '../replay/replayer.js';
import { createReplay } from '../replay/replayer.js';
import { ADAPTER_DEFAULTS } from '../replay/request.js';
import { renderReplayHtml } from '../report/replayHtml.js';
import { loadChecked } from '../rulesFile.js';

/** Options `sluice replay` and `sluice simulate` share. */
export const REPORT_OPTIONS = {
  rules: { type: 'string' },
  html: { type: 'string' },
  json: { type: 'boolean' },
  top: { type: 'string' },
  'show-keys': { type: 'boolean' },
  'key-secret': { type: 'string' },
  ...LIST_OPTION,
} as const;

/** The replay options those flags give. */
export function replayOptions(parsed: ParsedArgs): ReplayOptions {
  const keySecret = stringOption(parsed, 'key-secret') ?? process.env.SLUICE_KEY_SECRET;
  return {
    top: countOption(parsed, 'top', 20),
    showKeys: parsed.values['show-keys'] === true,
    ...(keySecret ? { keySecret } : {}),
  };
}

/** Writes a page; false (with the reason printed) when the file cannot be written. */
export async function writeHtml(io: Io, path: string, html: string): Promise<boolean> {
  try {
    await writeFile(path, html);
  } catch (error) {
    io.err(describeFsError(path, error));
    return false;
  }
  io.out(`wrote ${path}`);
  return true;
}

/** `--compare old.yaml new.yaml`: takes the two files out of the arguments (parseArgs has no two-value option). */
function takeCompare(args: readonly string[]): { rest: string[]; compare: [string, string] | undefined } {
  const at = args.indexOf('--compare');
  if (at === -1) return { rest: [...args], compare: undefined };
  const [older, newer] = [args[at + 1], args[at + 2]];
  if (older === undefined || newer === undefined || older.startsWith('-') || newer.startsWith('-')) {
    throw new UsageError('--compare needs two rules files: --compare old.yaml new.yaml');
  }
  return { rest: [...args.slice(0, at), ...args.slice(at + 3)], compare: [older, newer] };
}

function formatOf(parsed: ParsedArgs): LogFormat {
  const format = stringOption(parsed, 'format') ?? 'auto';
  if (!(LOG_FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`--format must be one of ${LOG_FORMATS.join(', ')}, got "${format}"`);
  }
  return format as LogFormat;
}

function ipv6Subnet(parsed: ParsedArgs): number {
  const subnet = countOption(parsed, 'ipv6-subnet', ADAPTER_DEFAULTS.ipv6Subnet);
  if (subnet > 128) throw new UsageError('--ipv6-subnet must be 1 to 128');
  return subnet;
}

async function load(path: string, io: Io): Promise<CompiledRules | ExitCode> {
  const loaded = await loadChecked(path, io);
  return typeof loaded === 'number' ? loaded : loaded.rules;
}

/** Feeds the logs into a sink; a usage exit code when a file cannot be read. */
async function feed(
  paths: readonly string[],
  parsed: ParsedArgs,
  sink: RequestSink,
  io: Io,
): Promise<ExitCode | undefined> {
  const parse = lineParser(formatOf(parsed), fieldMap(listOption(parsed, 'field')), {
    ...ADAPTER_DEFAULTS,
    ipv6Subnet: ipv6Subnet(parsed),
    caseSensitiveRoutes: parsed.values['case-sensitive-routes'] === true,
  });
  for (const path of paths) {
    try {
      await access(path, constants.R_OK);
    } catch (error) {
      io.err(describeFsError(path, error));
      return EXIT.usage;
    }
  }
  try {
    await feedLogs(paths, parse, sink, io);
  } catch (error) {
    // A file that turned unreadable midway (a truncated gzip, say).
    io.err(`sluice replay: ${error instanceof Error ? error.message : String(error)}`);
    return EXIT.usage;
  }
  return undefined;
}

async function compare(parsed: ParsedArgs, files: [string, string], io: Io): Promise<ExitCode> {
  const older = await load(files[0], io);
  if (typeof older === 'number') return older;
  const newer = await load(files[1], io);
  if (typeof newer === 'number') return newer;
  const lists = await listsOf(parsed, [older, newer], 'replay', io);
  if (typeof lists === 'number') return lists;
  const comparison = createComparison(older, newer, { ...replayOptions(parsed), lists });
  const failed = await feed(parsed.positionals, parsed, comparison, io);
  if (failed !== undefined) return failed;
  const report = comparison.finish();
  if (parsed.values.json === true) io.out(JSON.stringify(report, null, 2));
  else printComparison(io, report, { old: files[0], new: files[1] });
  const html = stringOption(parsed, 'html');
  const title = `Sluice replay: ${files[0]} → ${files[1]}`;
  if (html !== undefined && !(await writeHtml(io, html, renderReplayHtml(report.new, title, report))))
    return EXIT.usage;
  return EXIT.ok;
}

const HELP = `Usage: sluice replay <access-log>... --rules <rules.yaml> [options]
       sluice replay <access-log>... --compare <old.yaml> <new.yaml> [options]

Replays access logs through rules, with each request's logged time as the limiter's clock, on in-memory
counters: what would these rules have done to that traffic? Descriptors are built as the adapters build them
(route normalised, IPv6 keyed by /64, auth from the API key). For every rule: requests matched, denials
(enforced and would-be), distinct keys, top keys by denials, denials per hour, the Retry-After distribution;
for sliding_window and fixed_window rules, the error of the estimate against an exact sliding log.

Logs (plain or gzip, read as streams, oldest first): nginx/Apache combined lines, JSON lines, and Sluice decision
logs (their hashed descriptors as logged). --format auto tells them apart line by line.

Options:
  --rules <file>             the rules to replay through
  --compare <old> <new>      instead: requests whose outcome changes between two rule versions, by rule and key
  --format <f>               auto (default), combined, json or decisions
  --field <name=path>        where a JSON field is (repeatable): ip, time, method, path, status, api_key, or any
                             other descriptor (tenant=headers.x-tenant); combined logs: extra.N is the N-th
                             quoted field after the user agent (api_key=extra.1)
  --ipv6-subnet <n>          prefix length IPv6 clients are keyed by; default 64
  --case-sensitive-routes    the router tells /Search from /search
  --show-keys                show keys in clear (descriptor values) instead of counter tags
  --key-secret <s>           the limiter's keySecret, so tags match production's; default $SLUICE_KEY_SECRET
  --top <n>                  keys listed per rule; default 20
${listHelp(29)}
  --html <file>              also write a self-contained HTML page with charts
  --json                     print the report as JSON
  -h, --help                 show this help

Exit codes: 0 replayed, 1 invalid rules, 2 usage error, unreadable file or a bad --list file.`;

/** `sluice replay`: access logs through candidate rules, or through two rule versions side by side. */
export const replayCommand: Command = {
  name: 'replay',
  summary:
    'replay access logs through rules: denials by rule, key and hour, estimate error, --compare versions',
  help: HELP,
  async run(args, io) {
    const { rest, compare: files } = takeCompare(args);
    const parsed = parseCommandArgs(
      rest,
      {
        ...REPORT_OPTIONS,
        format: { type: 'string' },
        field: { type: 'string', multiple: true },
        'ipv6-subnet': { type: 'string' },
        'case-sensitive-routes': { type: 'boolean' },
      },
      ['compare'],
    );
    if (parsed.positionals.length === 0) throw new UsageError('replay needs at least one log file');
    const rulesPath = stringOption(parsed, 'rules');
    if (files !== undefined) {
      if (rulesPath !== undefined) throw new UsageError('give --rules or --compare, not both');
      return compare(parsed, files, io);
    }
    if (rulesPath === undefined)
      throw new UsageError('replay needs --rules <rules.yaml> (or --compare old new)');
    const rules = await load(rulesPath, io);
    if (typeof rules === 'number') return rules;
    const lists = await listsOf(parsed, [rules], 'replay', io);
    if (typeof lists === 'number') return lists;
    const replay = createReplay(rules, { ...replayOptions(parsed), lists });
    const failed = await feed(parsed.positionals, parsed, replay, io);
    if (failed !== undefined) return failed;
    const report = replay.finish();
    if (parsed.values.json === true) io.out(JSON.stringify(report, null, 2));
    else printReplay(io, report, parsed.positionals.join(', '));
    const html = stringOption(parsed, 'html');
    const title = `Sluice replay: ${parsed.positionals.join(', ')} through ${rulesPath}`;
    if (html !== undefined && !(await writeHtml(io, html, renderReplayHtml(report, title))))
      return EXIT.usage;
    return EXIT.ok;
  },
};
