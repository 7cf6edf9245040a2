import { ConfigError, formatProblem, RulesError } from '@sluice/core';
import type { Store } from '@sluice/core/store';
import { createRateLimitService } from '@sluice/envoy';
import { parseCommandArgs, stringOption } from '../args.js';
import { type Command, describeFsError, EXIT, type ExitCode, type Io, UsageError } from '../io.js';
import { loadRedisModules, redactUrl } from '../redis.js';

const HELP = `Usage: sluice rls --rules <rules.yaml> [--redis <url>] [--port 8081] [--host 127.0.0.1]
       [--region <name> --global-redis <url>]

Serves Envoy's rate limit service (envoy.service.ratelimit.v3.RateLimitService over gRPC, and grpc.health.v1)
on the rules file: Sluice's format or envoyproxy/ratelimit's config (domain, nested descriptors). With --redis
the counters are the ones the HTTP adapters on the same Redis spend. The file is watched: a good new version
is swapped in, a broken one is reported and the last good one stays. SIGINT or SIGTERM stops taking calls,
answers those in flight, and exits.

Options:
  --rules <file>      rules file (required)
  --redis <url>       redis://[user:password@]host:port[/db]; default: counters in this process's memory
  --port <n>          default 8081
  --host <address>    default 127.0.0.1; 0.0.0.0 to serve Envoys on other hosts
  --region <name>     this service's region: scope: global rules draw on one budget shared by every region,
                      in slices from the store of --global-redis (docs/guide/regions.md); --redis is then the
                      region's own store
  --global-redis <url>  the Redis every region shares (time limit 1 s: it may be across an ocean)
  -h, --help          show this help

Exit codes: 0 stopped by a signal, 1 invalid rules, 2 usage error, unreadable file, or ioredis or
@sluice/redis not installed (npm install ioredis @sluice/redis).`;

/** Time limit of a call to the global store: above a cross-region round trip (RedisStore's 20 ms is for a local Redis). */
const GLOBAL_TIMEOUT_MS = 1000;

/** Resolves on the first SIGINT or SIGTERM. */
function signalled(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop).off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop).on('SIGTERM', stop);
  });
}

/** `sluice rls`, stopping when `stop` resolves (a signal; tests pass their own). */
export async function serveRls(args: readonly string[], io: Io, stop: Promise<void>): Promise<ExitCode> {
  const parsed = parseCommandArgs(args, {
    rules: { type: 'string' },
    redis: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    region: { type: 'string' },
    'global-redis': { type: 'string' },
  });
  if (parsed.positionals.length > 0) throw new UsageError('rls takes no positional arguments');
  const rules = stringOption(parsed, 'rules');
  if (rules === undefined) throw new UsageError('rls needs --rules <file>');
  const port = Number(stringOption(parsed, 'port') ?? 8081);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new UsageError('--port must be 0 to 65535');
  const region = stringOption(parsed, 'region');
  const globalUrl = stringOption(parsed, 'global-redis');
  if ((region === undefined) !== (globalUrl === undefined))
    throw new UsageError('--region and --global-redis go together');
  const url = stringOption(parsed, 'redis');
  const redis = url === undefined ? undefined : await redisStore(url, io);
  if (redis === null) return EXIT.usage;
  const global = globalUrl === undefined ? undefined : await redisStore(globalUrl, io, GLOBAL_TIMEOUT_MS);
  if (global === null) return EXIT.usage;
  try {
    const service = await createRateLimitService({
      rules,
      port,
      host: stringOption(parsed, 'host') ?? '127.0.0.1',
      ...(redis ? { store: redis.store } : {}),
      ...(global && region !== undefined ? { regions: { region, global: global.store } } : {}),
      logger: { warn: io.err, error: io.err },
    });
    const regional = global ? `, region ${region}, global ${redactUrl(globalUrl!)}` : '';
    io.out(
      `listening ${service.port} (domain ${service.limiter.rules.domain}, ${url ? redactUrl(url) : 'memory'}${regional})`,
    );
    await stop;
    await service.close();
    return EXIT.ok;
  } catch (error) {
    if (error instanceof RulesError) {
      for (const problem of error.problems) io.err(formatProblem(problem));
      return EXIT.findings;
    }
    // A wrong --region name, say: said as a usage error.
    if (error instanceof ConfigError) throw new UsageError(error.message);
    const code = (error as { code?: unknown } | null)?.code;
    if (code === 'ENOENT' || code === 'EISDIR') {
      io.err(describeFsError(rules, error));
      return EXIT.usage;
    }
    throw error;
  } finally {
    redis?.client.disconnect();
    global?.client.disconnect();
  }
}

/** A RedisStore on `url`, reconnecting as a long-running server should; null when the modules are missing. */
async function redisStore(
  url: string,
  io: Io,
  timeoutMs?: number,
): Promise<{ store: Store; client: { disconnect(): void } } | null> {
  const modules = await loadRedisModules('rls --redis', io);
  if (modules === undefined) return null;
  const client = new modules.Redis(url, { ...modules.redis.recommendedRedisOptions });
  client.on('error', () => {});
  const store = new modules.redis.RedisStore({ client, ...(timeoutMs === undefined ? {} : { timeoutMs }) });
  return { store, client };
}

/** `sluice rls`: Envoy's rate limit service on a rules file. */
export const rlsCommand: Command = {
  name: 'rls',
  summary: "serve Envoy's rate limit service (gRPC) on a rules file, in memory or on Redis",
  help: HELP,
  run: (args, io) => serveRls(args, io, signalled()),
};
