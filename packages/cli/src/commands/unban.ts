import { type KeyedRule, tagFor } from '@sluice/core';
import { isKeyPrefix, KEY_PREFIX_RULE } from '@sluice/core/store';
import { listOption, parseCommandArgs, stringOption } from '../args.js';
import { type Command, EXIT, type ExitCode, type Io, UsageError } from '../io.js';
import { connectRedis, loadRedisModules, redactUrl } from '../redis.js';
import { loadChecked } from '../rulesFile.js';
import { actorOption, byHelp, recordAct } from './audit.js';
import { parseDescriptors } from './explain.js';

/**
 * The rule whose key to lift: from the rules file when given (its key descriptors, in its order), else
 * as the command line says (the --key descriptors in the order given, or --global).
 */
async function ruleOf(
  file: string | undefined,
  name: string,
  keyNames: readonly string[],
  global: boolean,
  io: Io,
): Promise<(KeyedRule & { domain?: string }) | ExitCode> {
  if (file === undefined) return { name, global, key: global ? [] : keyNames };
  const loaded = await loadChecked(file, io);
  if (typeof loaded === 'number') return loaded;
  const rule = loaded.rules.rules.find((r) => r.name === name);
  if (rule === undefined) throw new UsageError(`${file} has no rule named ${name}`);
  if (rule.ban === undefined) throw new UsageError(`rule ${name} has no ban: there is nothing to lift`);
  return { ...rule, domain: loaded.rules.domain };
}

/** `sluice unban [rules.yaml] --rule R --key d=v... --redis URL`: lifts one key's ban, as limiter.unban does. */
export const unbanCommand: Command = {
  name: 'unban',
  summary: "lift a key's ban under a rule with ban, in the RedisStore the gateways share",
  help: `Usage: sluice unban [<rules.yaml>] --rule <name> --key <descriptor=value>... --redis <url>
       [--cluster] [--prefix <prefix>] [--key-secret <secret>] [--global] [--by <name>]

Lifts the ban of one key under a rule with ban: deletes the key's ban state (its violations and escalation
level go with it) from Redis, so every gateway lets it through again, by its limit. The key is hashed as the
limiter hashes it: the rule's key descriptors and values (with the limiter's keySecret if it has one). Say
which rules file the gateways use to take the rule's key descriptors from it; without one, give the --key
descriptors in the order of the rule's key (or --global for a global rule). Prints the hashed key, never
the values. The unban is recorded in the audit trail (sluice audit lists it).

Example:
  sluice unban rules.yaml --rule login_per_ip --key ip=203.0.113.9 --redis redis://10.0.0.5:6379

Options:
  --rule <name>         the rule with ban (required)
  --key <d=v>           a key descriptor and its value; repeat for each of the rule's key descriptors
  --global              the rule is global (one counter for everyone): no --key
  --redis <url>         redis://[user:password@]host:port[/db] (required)
  --cluster             the URL is a node of a Redis Cluster
  --prefix <prefix>     the RedisStore's key prefix; default sluice
  --key-secret <s>      the limiter's keySecret, for keyed (HMAC) tags; default $SLUICE_KEY_SECRET
  ${byHelp(22)}
  -h, --help            show this help

Exit codes: 0 lifted (or the key had no ban), 1 Redis failure or the audit entry not written, 2 usage error,
unreadable or invalid rules file, or ioredis or @sluice/redis not installed.`,
  async run(args, io) {
    const parsed = parseCommandArgs(args, {
      rule: { type: 'string' },
      key: { type: 'string', multiple: true },
      global: { type: 'boolean' },
      redis: { type: 'string' },
      cluster: { type: 'boolean' },
      prefix: { type: 'string' },
      'key-secret': { type: 'string' },
      by: { type: 'string' },
    });
    const actor = actorOption(parsed);
    const [file, ...extra] = parsed.positionals;
    if (extra.length > 0) throw new UsageError('unban takes at most one rules file');
    const name = stringOption(parsed, 'rule');
    const url = stringOption(parsed, 'redis');
    if (name === undefined) throw new UsageError('unban needs --rule <name>');
    if (url === undefined) throw new UsageError('unban needs --redis <url>');
    const prefix = stringOption(parsed, 'prefix') ?? 'sluice';
    if (!isKeyPrefix(prefix)) throw new UsageError(`--prefix ${KEY_PREFIX_RULE}`);
    const pairs = listOption(parsed, 'key');
    const global = parsed.values.global === true;
    if (global === pairs.length > 0) throw new UsageError('unban needs --key descriptor=value, or --global');
    const descriptors = parseDescriptors(pairs);
    const rule = await ruleOf(file, name, Object.keys(descriptors), global, io);
    if (typeof rule === 'number') return rule;
    const secret = stringOption(parsed, 'key-secret') ?? process.env.SLUICE_KEY_SECRET;
    const tag = tagFor(rule, descriptors, secret);
    if (tag === undefined) {
      const missing = rule.key.filter((key) => descriptors[key] === undefined);
      throw new UsageError(
        `rule ${name} is keyed on ${missing.join(', ')}: give --key ${missing[0]}=<value>`,
      );
    }
    const modules = await loadRedisModules('unban', io);
    if (modules === undefined) return EXIT.usage;
    const client = connectRedis(modules, url, parsed.values.cluster === true);
    const store = new modules.redis.RedisStore({ client, prefix, timeoutMs: 5000, breaker: false });
    try {
      await client.connect();
      const lifted = await store.unban(rule.name, tag);
      io.out(
        lifted
          ? `lifted the ban of rule ${rule.name} for key ${tag} in ${redactUrl(url)}`
          : `rule ${rule.name} had no ban for key ${tag} in ${redactUrl(url)}: nothing to lift`,
      );
      const details = { tag, lifted };
      const entry = {
        at: Date.now(),
        kind: 'unban',
        actor,
        domain: rule.domain ?? null,
        rule: rule.name,
        details,
      } as const;
      return (await recordAct(store.audit, entry, redactUrl(url), io)) ? EXIT.ok : EXIT.findings;
    } catch (error) {
      io.err(`unban in ${redactUrl(url)} failed: ${error instanceof Error ? error.message : String(error)}`);
      return EXIT.findings;
    } finally {
      await store.close();
      client.disconnect();
    }
  },
};
