import { readFile } from 'node:fs/promises';
import { formatProblem, RulesError } from '@sluice/core';
import { parseCommandArgs, stringOption } from '../args.js';
import { type Command, describeFsError, EXIT, type Io, UsageError } from '../io.js';
import { countOf } from '../rulesFile.js';

/** A Redis URL without its password, to print. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(invalid URL)';
  }
}

/** What push needs from ioredis and @sluice/redis. */
interface RedisModules {
  readonly Redis: typeof import('ioredis').Redis;
  readonly publishRules: typeof import('@sluice/redis').publishRules;
}

/**
 * ioredis and @sluice/redis, loaded only here: they are optional peer dependencies of @sluice/cli, so that the other
 * commands install and run without a Redis client. When one is missing, says which and how to install it.
 */
async function loadRedis(io: Io): Promise<RedisModules | undefined> {
  const [ioredis, redis] = await Promise.allSettled([import('ioredis'), import('@sluice/redis')]);
  if (ioredis.status === 'fulfilled' && redis.status === 'fulfilled')
    return { Redis: ioredis.value.Redis, publishRules: redis.value.publishRules };
  const errors = [ioredis, redis].flatMap((result) => (result.status === 'rejected' ? [result.reason] : []));
  const other = errors.find((error) => (error as { code?: unknown } | null)?.code !== 'ERR_MODULE_NOT_FOUND');
  if (other !== undefined) throw other;
  // Node names the package it could not find, also when @sluice/redis is there but its ioredis is not.
  const missing = ['ioredis', '@sluice/redis'].filter((name) =>
    errors.some((e) => String(e).includes(`'${name}'`)),
  );
  io.err(
    `push needs ioredis and @sluice/redis (not installed: ${missing.join(', ') || 'one of them'}); ` +
      'install them with: npm install ioredis @sluice/redis',
  );
  return undefined;
}

/** `sluice push <file> --redis <url>`: validate, compile, store and announce a version to the gateways. */
export const pushCommand: Command = {
  name: 'push',
  summary: 'validate a rules file and publish it through Redis to every gateway using redisRules()',
  help: `Usage: sluice push <rules.yaml> --redis <url> [--domain <name>] [--prefix <prefix>]

Validates and compiles the file (refusing it with every error if invalid), stores it in Redis as the domain's
current version and announces it on pub/sub. Gateways started with redisRules(client, {domain}) switch to it at
once; gateways that start later load it. Each gateway checks the text again and keeps its last good version if
anything is wrong. Watch sluice_rules_info: during a push two versions show for a moment, never for long.

Options:
  --redis <url>       redis://[user:password@]host:port[/db] (required)
  --domain <name>     refuse the file unless its domain is this one (guards against pushing to the wrong fleet)
  --prefix <prefix>   key prefix, as given to redisRules; default sluice
  -h, --help          show this help

Exit codes: 0 published, 1 invalid rules or Redis failure, 2 usage error, unreadable file, or ioredis or
@sluice/redis not installed (npm install ioredis @sluice/redis).`,
  async run(args, io) {
    const parsed = parseCommandArgs(args, {
      redis: { type: 'string' },
      domain: { type: 'string' },
      prefix: { type: 'string' },
    });
    const [file, ...extra] = parsed.positionals;
    const url = stringOption(parsed, 'redis');
    if (file === undefined || extra.length > 0) throw new UsageError('push takes one rules file');
    if (url === undefined) throw new UsageError('push needs --redis <url>');
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      io.err(describeFsError(file, error));
      return EXIT.usage;
    }
    const redis = await loadRedis(io);
    if (redis === undefined) return EXIT.usage;
    const { Redis, publishRules } = redis;
    const client = new Redis(url, {
      lazyConnect: true,
      connectTimeout: 3000,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    client.on('error', () => {});
    try {
      await client.connect();
      const domain = stringOption(parsed, 'domain');
      const prefix = stringOption(parsed, 'prefix');
      const published = await publishRules(client, text, {
        source: file,
        ...(domain ? { domain } : {}),
        ...(prefix ? { prefix } : {}),
      });
      io.out(
        `published ${published.domain} version ${published.version} (serial ${published.serial}) to ${redactUrl(url)}; ` +
          `${countOf(published.receivers, 'gateway')} listening`,
      );
      return EXIT.ok;
    } catch (error) {
      if (error instanceof RulesError) {
        for (const problem of error.problems) io.err(formatProblem(problem));
        io.err(`${file}: ${countOf(error.problems.length, 'error')}; nothing published`);
      } else {
        io.err(`push to ${redactUrl(url)} failed: ${error instanceof Error ? error.message : String(error)}`);
      }
      return EXIT.findings;
    } finally {
      client.disconnect();
    }
  },
};
