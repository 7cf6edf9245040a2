import type { Descriptors, Lists } from '@sluice/core';
import type { CompiledRules } from '@sluice/core/store';
import { countOption, type ParsedArgs, parseCommandArgs, stringOption } from '../args.js';
import { parseBytes } from '../capacity/bytes.js';
import { type CapacityEstimate, type CapacityInput, estimateCapacity } from '../capacity/estimate.js';
import type { MeasuredRun } from '../capacity/measure.js';
import { printEstimate, printMeasured } from '../capacity/print.js';
import { type Command, EXIT, type ExitCode, type Io, UsageError } from '../io.js';
import { LIST_OPTION, listHelp, listsOf } from '../lists.js';
import { startProgress } from '../progress.js';
import { loadRedisModules, redactUrl } from '../redis.js';
import { ADAPTER_DEFAULTS } from '../replay/request.js';
import { loadChecked } from '../rulesFile.js';
import { clientDescriptors } from '../simulate/clients.js';
import { parseDescriptors } from './explain.js';

const DEFAULT_SHARD_MEMORY = '4gb';

/** Descriptors that differ per client: an IP and, unless the request is anonymous, an API key, when not given. */
function varyingOf(fixed: Descriptors): string[] {
  return ['ip', ...(fixed.auth === 'anonymous' ? [] : ['api_key'])].filter(
    (name) => fixed[name] === undefined,
  );
}

/**
 * The clients of the measured run, and the typical request the rules are matched with: the descriptors given,
 * with the varying ones per client, built as an adapter builds them.
 */
function sampleClients(fixed: Descriptors): (client: number) => Descriptors {
  return clientDescriptors(fixed, varyingOf(fixed), ADAPTER_DEFAULTS);
}

function cpuShare(parsed: ParsedArgs): number {
  const text = stringOption(parsed, 'cpu-share') ?? '0.5';
  const share = Number(text);
  if (!(share > 0 && share <= 1))
    throw new UsageError(`--cpu-share must be above 0 and at most 1, got "${text}"`);
  return share;
}

/**
 * The measured run on a real Redis: ioredis, @sluice/redis and the measuring code load only here, as they are
 * optional peers of @sluice/cli that the other commands do without.
 */
async function measure(
  url: string,
  rules: CompiledRules,
  options: { keys: number; requests: number; descriptors: Descriptors; lists: Lists },
  io: Io,
): Promise<MeasuredRun | ExitCode> {
  const modules = await loadRedisModules('capacity --measure', io);
  if (modules === undefined) return EXIT.usage;
  // Loaded only now: it imports @sluice/redis.
  const { measureCapacity } = await import('../capacity/measure.js');
  const client = new modules.Redis(url, { lazyConnect: true, connectTimeout: 3000, maxRetriesPerRequest: 1 });
  client.on('error', () => {}); // reported below, once
  const progress = startProgress(io, { label: 'capacity --measure', unit: 'requests' });
  try {
    await client.connect();
    return await measureCapacity(client, rules, {
      keys: options.keys,
      requests: options.requests,
      inFlight: 64,
      descriptorsOf: sampleClients(options.descriptors),
      lists: options.lists,
      progress: progress.update,
    });
  } catch (error) {
    io.err(
      `capacity --measure: ${redactUrl(url)}: ${error instanceof Error ? error.message : String(error)}`,
    );
    return EXIT.findings;
  } finally {
    progress.end();
    client.disconnect();
  }
}

/** `sluice capacity`: Redis memory, calls and script time, keys per slot and primaries for a load. */
export const capacityCommand: Command = {
  name: 'capacity',
  summary: 'size Redis for rules at a load: memory, script calls and time, keys per slot, primaries needed',
  help: `Usage: sluice capacity --rules <rules.yaml> --rps <n> --keys <n> [descriptor=value]... [options]

Estimates what the rules cost Redis at a peak of --rps requests a second over --keys active clients (API keys,
IPs, ...), from the per-key and per-check figures measured for @sluice/redis (its README, Sizing) and the server
CPU per check and per call measured by bench/capacity-scale.ts: memory, script calls and script time a second,
Redis CPU, hash tags and keys per slot, and the primaries needed to keep each under --cpu-share of a core and
within --shard-memory. CPU figures are extrapolated, linear in the rate, from the measured run the output names. descriptor=value arguments describe a typical request, to count
only the rules that apply to it (default: every rule applies, the upper bound). With --measure, also runs a
sample through a real Redis (its own key prefix, keys deleted afterwards) and prints measured beside estimated;
use an idle Redis, since INFO figures are server-wide.

Options:
  --rules <file>          the rules (required)
  --rps <n>               peak requests per second, whole fleet (required)
  --keys <n>              active clients within a window (required)
  --shard-memory <size>   memory a primary may give the limiter; default ${DEFAULT_SHARD_MEMORY}
  --cpu-share <x>         share of a core a primary's scripts may use at peak; default 0.5
  --measure <redis-url>   also measure on this Redis (never a production one)
  --sample-keys <n>       clients in the measured run; default 2000
  --requests <n>          requests in the measured run; default 5 per client
${listHelp(26)}
  --json                  print the estimate (and the measurement) as JSON
  -h, --help              show this help

Exit codes: 0 estimated, 1 invalid rules or the measured run failed, 2 usage error, a bad --list file, or (with
--measure) ioredis or @sluice/redis not installed.`,
  async run(args, io) {
    const parsed = parseCommandArgs(args, {
      rules: { type: 'string' },
      rps: { type: 'string' },
      keys: { type: 'string' },
      'shard-memory': { type: 'string' },
      'cpu-share': { type: 'string' },
      measure: { type: 'string' },
      'sample-keys': { type: 'string' },
      requests: { type: 'string' },
      json: { type: 'boolean' },
      ...LIST_OPTION,
    });
    const rulesPath = stringOption(parsed, 'rules');
    if (rulesPath === undefined) throw new UsageError('capacity needs --rules <rules.yaml>');
    if (stringOption(parsed, 'rps') === undefined || stringOption(parsed, 'keys') === undefined) {
      throw new UsageError('capacity needs --rps <requests per second> and --keys <active clients>');
    }
    const descriptors = parseDescriptors(parsed.positionals);
    const settings = {
      rps: countOption(parsed, 'rps', 1),
      keys: countOption(parsed, 'keys', 1),
      shardMemory: parseBytes(stringOption(parsed, 'shard-memory') ?? DEFAULT_SHARD_MEMORY, 'shard-memory'),
      cpuShare: cpuShare(parsed),
    };
    const sampleKeys = countOption(parsed, 'sample-keys', 2000);
    const requests = countOption(parsed, 'requests', sampleKeys * 5);
    const loaded = await loadChecked(rulesPath, io);
    if (typeof loaded === 'number') return loaded;
    const lists = await listsOf(parsed, [loaded.rules], 'capacity', io);
    if (typeof lists === 'number') return lists;
    const input: CapacityInput = {
      rules: loaded.rules,
      lists,
      ...settings,
      ...(parsed.positionals.length > 0
        ? { descriptors: sampleClients(descriptors)(0), varying: new Set(varyingOf(descriptors)) }
        : {}),
    };
    const estimate = estimateCapacity(input);
    const url = stringOption(parsed, 'measure');
    let measured: { run: MeasuredRun; estimate: CapacityEstimate } | undefined;
    if (url !== undefined) {
      const run = await measure(url, loaded.rules, { keys: sampleKeys, requests, descriptors, lists }, io);
      if (typeof run === 'number') return run;
      // The sample's requests are the typical request's, whether or not descriptors were given.
      measured = {
        run,
        estimate: estimateCapacity({
          ...input,
          keys: sampleKeys,
          descriptors: sampleClients(descriptors)(0),
          varying: new Set(varyingOf(descriptors)),
        }),
      };
    }
    if (parsed.values.json === true) {
      io.out(
        JSON.stringify(
          { estimate, ...(measured ? { measured: measured.run, estimateForSample: measured.estimate } : {}) },
          null,
          2,
        ),
      );
      return EXIT.ok;
    }
    io.out(
      `${rulesPath}: domain ${loaded.rules.domain}, version ${loaded.rules.version}; ${settings.rps.toLocaleString('en')} requests/s over ${settings.keys.toLocaleString('en')} keys`,
    );
    printEstimate(io, estimate, settings.shardMemory, settings.cpuShare);
    if (measured !== undefined && url !== undefined) {
      io.out('');
      io.out(`measured on ${redactUrl(url)}: ${sampleKeys} keys, ${requests} requests, 64 in flight`);
      printMeasured(io, measured.estimate, measured.run);
    }
    return EXIT.ok;
  },
};
