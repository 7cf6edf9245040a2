import { readFile } from 'node:fs/promises';
import { formatProblem, RulesError } from '@sluice/core';
import { parseCommandArgs, stringOption } from '../args.js';
import { type Command, describeFsError, EXIT, UsageError } from '../io.js';
import { connectRedis, loadRedisModules, redactUrl } from '../redis.js';
import { countOf } from '../rulesFile.js';
import { actorOption, byHelp, pushEntry, recordAct } from './audit.js';

/** `sluice push <file> --redis <url>`: validate, compile, store and announce a version to the gateways. */
export const pushCommand: Command = {
  name: 'push',
  summary: 'validate a rules file and publish it through Redis to every gateway using redisRules()',
  help: `Usage: sluice push <rules.yaml> --redis <url> [--domain <name>] [--prefix <prefix>] [--by <name>]

Validates and compiles the file (refusing it with every error if invalid), stores it in Redis as the domain's
current version and announces it on pub/sub. Gateways started with redisRules(client, {domain}) switch to it at
once; gateways that start later load it. Each gateway checks the text again and keeps its last good version if
anything is wrong. Watch sluice_rules_info: during a push two versions show for a moment, never for long.
The push is recorded in the audit trail (<prefix>:{audit}:log; sluice audit lists it).

Options:
  --redis <url>       redis://[user:password@]host:port[/db] (required)
  --domain <name>     refuse the file unless its domain is this one (guards against pushing to the wrong fleet)
  --prefix <prefix>   key prefix, as given to redisRules; default sluice
  ${byHelp(20)}
  -h, --help          show this help

Exit codes: 0 published, 1 invalid rules, Redis failure or the audit entry not written, 2 usage error,
unreadable file, or ioredis or @sluice/redis not installed (npm install ioredis @sluice/redis).`,
  async run(args, io) {
    const parsed = parseCommandArgs(args, {
      redis: { type: 'string' },
      domain: { type: 'string' },
      prefix: { type: 'string' },
      by: { type: 'string' },
    });
    const actor = actorOption(parsed);
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
    const modules = await loadRedisModules('push', io);
    if (modules === undefined) return EXIT.usage;
    const client = connectRedis(modules, url, false);
    try {
      await client.connect();
      const domain = stringOption(parsed, 'domain');
      const prefix = stringOption(parsed, 'prefix');
      const published = await modules.redis.publishRules(client, text, {
        source: file,
        ...(domain ? { domain } : {}),
        ...(prefix ? { prefix } : {}),
      });
      io.out(
        `published ${published.domain} version ${published.version} (serial ${published.serial}) to ${redactUrl(url)}; ` +
          `${countOf(published.receivers, 'gateway')} listening`,
      );
      const store = new modules.redis.RedisStore({ client, breaker: false, ...(prefix ? { prefix } : {}) });
      const entry = pushEntry(published, text, file, actor);
      const recorded = await recordAct(store.audit, entry, redactUrl(url), io);
      await store.close();
      return recorded ? EXIT.ok : EXIT.findings;
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
