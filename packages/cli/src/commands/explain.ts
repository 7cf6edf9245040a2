import type { CompiledRule, Descriptors, ExplainedRule } from '@sluice/core';
import { createLimiter, scaled } from '@sluice/core';
import type { BanState, CompiledRules } from '@sluice/core/store';
import { counterKey, descriptorOf, isKeyPrefix, KEY_PREFIX_RULE } from '@sluice/core/store';
import { ENVOY_DOMAIN, ENVOY_PATH } from '@sluice/envoy';
import { type ParsedArgs, parseCommandArgs, stringOption } from '../args.js';
import { type Command, EXIT, type Io, UsageError } from '../io.js';
import { emptyLists, LIST_OPTION, listHelp, listsOf } from '../lists.js';
import { connectRedis, loadRedisModules, redactUrl } from '../redis.js';
import { formatDuration, formatHelp, formatOption, loadChecked, type RulesFormat } from '../rulesFile.js';

/** `descriptor=value` arguments as descriptors. */
export function parseDescriptors(pairs: readonly string[]): Descriptors {
  const descriptors: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`expected descriptor=value, got "${pair}"`);
    descriptors[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return descriptors;
}

/** A rule's limit as one phrase: `600 per 60s`, `burst 100`, `2 concurrent (lease 60s)`. */
export function describeLimit(rule: CompiledRule): string {
  const { limit, windowMs, burst, period } = rule.params;
  if (descriptorOf(rule.algorithm).limit === 'concurrent')
    return `${limit} concurrent (lease ${formatDuration(windowMs)})`;
  const per = period ?? formatDuration(windowMs);
  return burst !== limit ? `${limit} per ${per}, burst ${burst}` : `${limit} per ${per}`;
}

function describeMode(explained: ExplainedRule): string {
  if (explained.mode === 'shadow') return 'shadow (counted and logged, never denies)';
  if (explained.rollout >= 100) return 'enforce';
  const slice = `rollout ${explained.rollout}%`;
  if (explained.effectiveMode === undefined) return `enforce, ${slice}`;
  return explained.effectiveMode === 'enforce'
    ? `enforce, ${slice}: this key is inside the rollout, enforced`
    : `enforce, ${slice}: this key is outside the rollout, shadowed`;
}

function printRule(
  io: Io,
  rule: CompiledRule,
  explained: ExplainedRule,
  descriptors: Descriptors,
  prefix: string,
  live: LiveState | undefined,
): void {
  io.out(`  ${rule.name}`);
  if (explained.exemptedBy) io.out(`    exempt     by allow rule ${explained.exemptedBy}: not evaluated`);
  if (explained.action !== 'limit') {
    io.out(`    action     ${explained.action} (counts nothing), mode ${explained.mode}`);
    return;
  }
  io.out(`    limit      ${describeLimit(rule)} (${rule.algorithm})`);
  io.out(`    mode       ${describeMode(explained)}`);
  if (explained.tag === undefined) {
    const missing = rule.key.filter((name) => descriptors[name] === undefined);
    io.out(`    counter    none: missing descriptor ${missing.join(', ')}, so the rule does not apply`);
  } else {
    const on = rule.global ? 'one counter for everyone' : `key [${rule.key.join(', ')}]`;
    io.out(
      `    counter    ${explained.tag} (${on}; Redis keys ${counterKey(prefix, { rule: rule.name, tag: explained.tag }, '*')})`,
    );
  }
  for (const line of describePolicies(rule)) io.out(`    ${line}`);
  const banState = live?.bans.get(rule.name);
  if (banState !== undefined) io.out(`    ban state  ${banState}`);
  const stage = live?.stages.get(rule.name);
  if (stage !== undefined) io.out(`    stage      ${stage}`);
  const factor = live?.factors.get(rule.name);
  if (factor !== undefined) io.out(`    factor     ${describeFactor(rule, factor)}`);
  io.out(`    scope      ${rule.scope}, on store error: ${rule.onStoreError}`);
  io.out(`    budget     ${describeBudget(rule)}`);
  if (rule.owner || rule.review)
    io.out(`    owner      ${rule.owner ?? '(none)'}, review ${rule.review ?? '(none)'}`);
}

/**
 * Which budget a counting rule draws on (docs/guide/regions.md): `scope: global` one budget shared by every
 * region, handed out in slices from the global store (its counters named); otherwise the limiter's store (with
 * regions, the region's own) or this process.
 */
export function describeBudget(rule: CompiledRule): string {
  if (rule.scope === 'global')
    return (
      `one global budget of ${describeLimit(rule)} shared by every region: with regions, slices of it ` +
      `(global store counters ${rule.name}.g and ${rule.name}.r.<region>) spent in each region's store`
    );
  if (rule.scope === 'local') return 'this process only';
  return "the store's: with regions, each region's own (a regional limit)";
}

/** A rule's ban, penalty and idempotent, one line each (`ban        after 5 denials within 10m: 15m, then 1h`). */
export function describePolicies(rule: CompiledRule): string[] {
  const lines: string[] = [];
  const { ban, penalty, idempotentMs } = rule;
  if (ban !== undefined) {
    const then = (ban.escalateMs ?? []).map(formatDuration);
    const lengths = then.length === 0 ? '' : `, then ${then.join(', ')} (the last repeats)`;
    lines.push(
      `ban        after ${ban.after} denials within ${formatDuration(ban.withinMs)}: ${formatDuration(ban.forMs)}${lengths}`,
    );
  }
  if (penalty !== undefined) lines.push(`penalty    ${penalty} units per denied request`);
  if (idempotentMs !== undefined)
    lines.push(
      `idempotent ${formatDuration(idempotentMs)}: a retry with the same Idempotency-Key is not charged`,
    );
  return [...lines, ...describeStages(rule)];
}

/** A rule's escalation stages before the ban (`warn_at`, `challenge`), one line each. */
function describeStages(rule: CompiledRule): string[] {
  const lines: string[] = [];
  if (rule.warnAt !== undefined) lines.push(`warn at    ${Math.round(rule.warnAt * 100)}% of the limit`);
  const challenge = rule.challenge;
  if (challenge !== undefined)
    lines.push(
      `challenge  from violation ${challenge.after}: ${challenge.difficulty} bits, one more each violation after; ` +
        `a solution passes ${challenge.passRequests} requests for ${formatDuration(challenge.passMs)}`,
    );
  return lines;
}

/**
 * The escalation stage a key's ban state puts it in for this rule: `ban`, `challenge` (its violations reached
 * `challenge.after`), `limit` (violations counted, no challenge yet) or `none`.
 */
export function describeStage(state: BanState | undefined, rule: CompiledRule, now: number): string {
  if (state !== undefined && state.until > now) return 'ban';
  const counted = state !== undefined && now < state.since + (rule.ban?.withinMs ?? 0) ? state.count : 0;
  const challenge = rule.challenge;
  if (challenge !== undefined && counted >= challenge.after)
    return `challenge (${counted} violation(s); the ban at ${rule.ban?.after})`;
  if (counted > 0)
    return `limit (${counted} violation(s); ${challenge ? `challenge at ${challenge.after}, ` : ''}ban at ${rule.ban?.after})`;
  return 'none (no violations counted)';
}

/** A key's ban state as read from Redis, in words, at `now`. */
export function describeBanState(state: BanState | undefined, now: number): string {
  if (state === undefined) return 'not banned, no violations counted';
  const iso = (ms: number) => new Date(ms).toISOString();
  if (state.until > now) return `banned until ${iso(state.until)} (ban ${state.level} of this key)`;
  const parts = ['not banned'];
  if (state.count > 0) parts.push(`${state.count} violation(s) counted since ${iso(state.since)}`);
  if (state.level > 0 && state.levelUntil > now)
    parts.push(`${state.level} earlier ban(s), remembered until ${iso(state.levelUntil)}`);
  return parts.join('; ');
}

/**
 * An adaptive rule's shared factor as read from Redis (the fleet's, 1 when no gateway reported within the
 * key's TTL), with the limit it makes: `0.5: limit now 250 per 1s (of 500)`.
 */
export function describeFactor(rule: CompiledRule, factor: number): string {
  const { limit, burst } = rule.params;
  const now = {
    ...rule,
    params: { ...rule.params, limit: scaled(limit, factor), burst: scaled(burst, factor) },
  };
  const figures = factor >= 1 ? 'the full limit' : `limit now ${describeLimit(now)} (of ${limit})`;
  return `${factor}: ${figures}`;
}

/** What `--redis` reads for the matched rules, by rule name: ban states in words, adaptive factors. */
interface LiveState {
  readonly bans: Map<string, string>;
  /** Each banning rule's escalation stage for the key (describeStage). */
  readonly stages: Map<string, string>;
  readonly factors: Map<string, number>;
}

/**
 * The ban state of each matched rule with a ban (one GET each) and the shared factor of each adaptive one (one
 * HGET each), read from Redis; undefined when there is no --redis, or Redis cannot be read (said on stderr:
 * explain still explains).
 */
async function readLiveState(
  parsed: ParsedArgs,
  rules: readonly [CompiledRule, ExplainedRule][],
  table: CompiledRules,
  prefix: string,
  at: number,
  io: Io,
): Promise<LiveState | undefined> {
  const url = stringOption(parsed, 'redis');
  const banned = rules.filter(([rule, explained]) => rule.ban !== undefined && explained.tag !== undefined);
  const adaptive = rules.filter(
    ([rule, explained]) => rule.adaptive !== undefined && explained.action === 'limit',
  );
  if (url === undefined || banned.length + adaptive.length === 0) return undefined;
  const modules = await loadRedisModules('explain --redis', io);
  if (modules === undefined) return undefined;
  const client = connectRedis(modules, url, parsed.values.cluster === true);
  try {
    await client.connect();
    const live: LiveState = { bans: new Map(), stages: new Map(), factors: new Map() };
    for (const [rule, explained] of banned) {
      const raw = await client.get(modules.redis.banKey(prefix, { rule: rule.name, tag: explained.tag! }));
      const state = modules.redis.parseBanState(raw);
      live.bans.set(rule.name, describeBanState(state, at));
      live.stages.set(rule.name, describeStage(state, rule, at));
    }
    for (const [rule] of adaptive) {
      // The limiter's report id: the same `domain/rule` RedisStore hashes into the key.
      const key = modules.redis.factorKey(prefix, `${table.domain}/${rule.name}`);
      const raw = await client.hget(key, 'f');
      live.factors.set(rule.name, raw === null ? 1 : Number(raw));
    }
    return live;
  } catch (error) {
    io.err(
      `live state not read from ${redactUrl(url)}: ${error instanceof Error ? error.message : String(error)}`,
    );
    return undefined;
  } finally {
    client.disconnect();
  }
}

/** The live state's JSON fields: `banStates` and `adaptiveFactors`, each only when read. */
function liveJson(live: LiveState | undefined): Record<string, Record<string, string | number>> {
  if (live === undefined) return {};
  return {
    ...(live.bans.size === 0 ? {} : { banStates: Object.fromEntries(live.bans) }),
    ...(live.stages.size === 0 ? {} : { stages: Object.fromEntries(live.stages) }),
    ...(live.factors.size === 0 ? {} : { adaptiveFactors: Object.fromEntries(live.factors) }),
  };
}

/** Rules replaced, for these descriptors, by a more specific rule that matched. */
function overridden(table: CompiledRules, matched: readonly CompiledRule[]): [CompiledRule, string][] {
  const names = new Set(matched.map((rule) => rule.name));
  return matched.flatMap((rule) => {
    const target = table.rules.find((r) => r.name === rule.overrides);
    return target && !names.has(target.name) ? [[target, rule.name] as [CompiledRule, string]] : [];
  });
}

/** `sluice explain <file> key=value...`: which rules apply, with overrides, counter tags, mode and rollout. */
export const explainCommand: Command = {
  name: 'explain',
  summary: 'show the rules that apply to a request, overrides applied, hashed counter keys, mode and rollout',
  help: `Usage: sluice explain <rules.yaml> <descriptor=value>... [--at <ISO time>] [--key-secret <secret>]
       [--prefix <prefix>] [--list <name=file>]... [--format sluice|envoy|auto] [--json]

Shows what the limiter would evaluate for a request with these descriptors, without counting anything:
the matching rules (most specific wins where one overrides another), each rule's limit and algorithm,
the hashed counter tag as stored (the same hash the limiter uses, so you can find the keys in Redis),
and the mode for this key after rollout.

An envoyproxy/ratelimit config file is read as such: give one Envoy descriptor's entries in order
(database=users user=alice), and explain adds the envoy_path descriptor the rate limit service would
(database/user), so the converted rules match as they do for Envoy's calls.

Example:
  sluice explain rules.yaml auth=api_key tenant=acme api_key=k_123 route=/search

Options:
  --at <time>           evaluate at this time (ISO 8601), for rules with an expiry; default now
  --key-secret <s>      the limiter's keySecret, for keyed (HMAC) tags; default $SLUICE_KEY_SECRET
  --prefix <prefix>     the RedisStore's key prefix, for the Redis key names shown; default sluice
  --redis <url>         read, from this Redis (read only), the key's ban state under rules with ban and
                        the fleet's live factor of adaptive rules
  --cluster             the --redis URL is a node of a Redis Cluster
${listHelp(24)}
  ${formatHelp(24)}
  --json                print the explanation as JSON
  -h, --help            show this help

Exit codes: 0 explained, 1 invalid rules, 2 usage error, unreadable file or a bad --list file.`,
  async run(args, io) {
    const parsed = parseCommandArgs(args, {
      at: { type: 'string' },
      'key-secret': { type: 'string' },
      prefix: { type: 'string' },
      redis: { type: 'string' },
      cluster: { type: 'boolean' },
      json: { type: 'boolean' },
      format: { type: 'string' },
      ...LIST_OPTION,
    });
    const prefix = stringOption(parsed, 'prefix') ?? 'sluice';
    // The same rule as RedisStore's: the prefix is part of every key and must not hold a hash tag.
    if (!isKeyPrefix(prefix)) throw new UsageError(`--prefix ${KEY_PREFIX_RULE}`);
    const [file, ...pairs] = parsed.positionals;
    if (file === undefined) throw new UsageError('explain needs a rules file and descriptor=value pairs');
    const format = formatOption(stringOption(parsed, 'format'));
    const atText = stringOption(parsed, 'at');
    const at = atText === undefined ? Date.now() : Date.parse(atText);
    if (Number.isNaN(at)) throw new UsageError(`--at must be an ISO 8601 time, got "${atText}"`);
    const loaded = await loadChecked(file, io, undefined, format);
    if (typeof loaded === 'number') return loaded;
    const table = loaded.rules;
    const descriptors = withEnvoyPath(parseDescriptors(pairs), pairs, loaded.format, table.domain);
    const secret = stringOption(parsed, 'key-secret') ?? process.env.SLUICE_KEY_SECRET;
    const lists = await listsOf(parsed, [table], 'explain', io);
    if (typeof lists === 'number') return lists;
    const limiter = createLimiter({
      rules: table,
      clock: () => at,
      lists,
      ...(secret ? { keySecret: secret } : {}),
    });
    const explanation = limiter.explain(descriptors);
    const matched = explanation.rules.map((e) => table.rules.find((r) => r.name === e.rule)!);
    const replaced = overridden(table, matched).filter(
      ([target]) => loaded.format !== 'envoy' || matchesValues(target, descriptors),
    );
    await limiter.close();
    const pairsOf = explanation.rules.map((e, i) => [matched[i]!, e] as [CompiledRule, ExplainedRule]);
    const live = await readLiveState(parsed, pairsOf, table, prefix, at, io);

    if (parsed.values.json) {
      const overrides = replaced.map(([rule, by]) => ({ rule: rule.name, by }));
      io.out(
        JSON.stringify(
          { ...explanation, domain: table.domain, overridden: overrides, ...liveJson(live) },
          null,
          2,
        ),
      );
      return EXIT.ok;
    }
    io.out(`${file}: domain ${table.domain}, version ${explanation.version}`);
    if (matched.length === 0) {
      io.out('no rule matches these descriptors: the request is not limited');
      return EXIT.ok;
    }
    io.out(`matching rules (${matched.length}), all evaluated; any enforcing rule can deny:`);
    for (const [i, explained] of explanation.rules.entries()) {
      printRule(io, matched[i]!, explained, descriptors, prefix, live);
    }
    for (const [rule, by] of replaced)
      io.out(`overridden: ${rule.name} (${describeLimit(rule)}) is replaced by ${by}`);
    const decided = explanation.decidedBy;
    if (decided)
      io.out(
        `decided by ${decided.action} rule ${decided.rule}: nothing is counted (allow, then deny, then limit)`,
      );
    const unread = emptyLists(parsed, table);
    if (unread.length > 0)
      io.out(`lists not read by explain (they match nothing here): ${unread.join(', ')}`);
    return EXIT.ok;
  },
};

/** For Envoy's format, the `envoy_path` (the keys in the order given) and `envoy_domain` the service adds. */
function withEnvoyPath(
  descriptors: Descriptors,
  pairs: readonly string[],
  format: RulesFormat,
  domain: string,
): Descriptors {
  if (format !== 'envoy' || descriptors[ENVOY_PATH] !== undefined) return descriptors;
  const keys = pairs.map((pair) => pair.slice(0, pair.indexOf('=')));
  return { ...descriptors, [ENVOY_PATH]: keys.join('/'), [ENVOY_DOMAIN]: domain };
}

/**
 * For a converted Envoy config: whether a rule's exact values match these descriptors. Its `overrides` chain
 * every node of one key path (database=users -> database=default), of which only those that match are overridden.
 */
function matchesValues(rule: CompiledRule, descriptors: Descriptors): boolean {
  return Object.entries(rule.match).every(([name, values]) => {
    const value = descriptors[name];
    return value !== undefined && (values.length === 0 || values.includes(value));
  });
}
