import { ConfigError, formatProblem, RulesError } from '../base/errors.js';
import { createLimiter, type Limiter } from '../engine/engine.js';
import type { Lists } from '../lists/contract.js';
import { combineObservers } from '../observe/combine.js';
import type { Observer } from '../observe/contract.js';
import { type DecisionLogger, decisionLogObserver } from '../observe/decisionLog.js';
import { LIMITER_NOTICES, type LimiterNotice } from '../observe/misuse.js';
import type { CompiledRules, RulesSource } from '../rules/contract.js';
import {
  compileRules,
  isRulesSource,
  loadRulesSync,
  type RulesDocument,
  type RulesInput,
  type RulesLike,
  resolveRulesSync,
} from '../rules/index.js';
import { inlineRules } from './inline.js';
import type { RateLimitLogger } from './options.js';
import type { LimiterSettings } from './settings.js';

/** The rules `rateLimit()` applies when given none: 60 requests a minute per client IP. */
export const DEFAULT_RULES = {
  domain: 'default',
  rules: [
    {
      name: 'default_per_ip',
      match: {},
      key: ['ip'],
      limit: { requests: 60, per: '60s' },
      algorithm: 'sliding_window',
    },
  ],
} as const;

const DEFAULT_NOTICE =
  'sluice: no rules given, using the default: 60 requests a minute per client IP (sliding window, ' +
  'in-memory store). Pass `rules` to choose your own.';

const DRY_RUN_NOTICE =
  'sluice: dryRun is on: every rule is in shadow mode, counted and logged but never denying a request. ' +
  'Turn it off to enforce.';

/** The engine behind an adapter, built once from validated options (defaults and dry runs announced). */
export function limiterFor<Req>(options: LimiterSettings<Req>): Limiter {
  const shorthand = shorthandRules(options);
  if (options.rules === undefined && shorthand === undefined) options.logger.warn(DEFAULT_NOTICE);
  if (options.dryRun === true) options.logger.warn(DRY_RUN_NOTICE);
  return createLimiter({
    rules: rulesOption(options.rules ?? shorthand ?? DEFAULT_RULES, options.logger),
    ...(options.store ? { store: options.store } : {}),
    ...(options.localStore ? { localStore: options.localStore } : {}),
    ...(options.regions ? { regions: options.regions } : {}),
    ...(options.watch === undefined ? {} : { watch: options.watch }),
    ...(options.clock ? { clock: options.clock } : {}),
    ...observerOption(options),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.keySecret !== undefined ? { keySecret: options.keySecret } : {}),
    ...(options.dryRun === true ? { dryRun: true } : {}),
    ...(options.lists ? { lists: options.lists } : {}),
    // The engine's own notices (a limiter built per request, one store counted twice) go where the adapter's do.
    logger: options.logger,
    silence: (options.silence ?? []).filter((code): code is LimiterNotice => code in LIMITER_NOTICES),
  });
}

/** The rules of `{limit, per, key}` given instead of `rules` (validated): `per_ip`, or `per_api_key` and its anonymous twin. */
function shorthandRules<Req>(options: LimiterSettings<Req>): RulesInput | undefined {
  const { limit, per, key, algorithm } = options;
  if (limit === undefined || per === undefined) return undefined;
  const inline = { limit, per, ...(key ? { key } : {}), ...(algorithm ? { algorithm } : {}) };
  return { domain: 'default', rules: inlineRules(inline, key === 'api_key' ? 'per_api_key' : 'per_ip') };
}

/** The observer, with decision logs to the logger joined in when `decisionLog` asks for them. */
function observerOption<Req>(options: LimiterSettings<Req>): { observer?: Observer } {
  if (options.decisionLog === undefined) return options.observer ? { observer: options.observer } : {};
  const log = decisionLogObserver({
    // The schema made sure it has info(); pino-style loggers take objects in warn() as well.
    logger: options.logger as unknown as DecisionLogger,
    ...(options.decisionLog === true ? {} : { sample: options.decisionLog }),
    ...(options.keySecret !== undefined ? { keySecret: options.keySecret } : {}),
  });
  return { observer: options.observer ? combineObservers(options.observer, log) : log };
}

/**
 * The `rules` option as the engine takes it, synchronously so that `rateLimit(options)` fails at start-up:
 * a YAML file path (read and parsed, warnings logged), a rules object, compiled rules, or a reloading source.
 */
function rulesOption(input: RulesLike | RulesSource, logger: RateLimitLogger): CompiledRules | RulesSource {
  if (isRulesSource(input)) return input;
  if (typeof input !== 'string') return resolveRulesSync(input);
  let document: RulesDocument;
  try {
    document = loadRulesSync(input);
  } catch (error) {
    if (error instanceof RulesError) throw error;
    throw new ConfigError(`rules file ${input} cannot be read: ${(error as Error).message}`);
  }
  for (const warning of document.warnings) logger.warn(`sluice: ${formatProblem(warning)}`);
  return compileRules(document);
}

/**
 * Compiles route-level rules, each call labelled by its route. A rule name is its counters' identity, so a
 * name already taken by a global rule or another route's rule is refused: two routes with one name would
 * share counters unseen. Share counters by sharing the compiled rules instead.
 */
export function routeRuleCompiler(
  limiter: Limiter,
  lists?: Lists,
): (rules: unknown, label: string) => CompiledRules {
  const owners = new Map<string, string>();
  return (rules, label) => {
    if (!Array.isArray(rules) || rules.length === 0) {
      throw new ConfigError(`${label}: rateLimit.rules must be a non-empty array of rules`);
    }
    const input = { domain: limiter.rules.domain, rules: rules as RulesInput['rules'] };
    const compiled = compileRules(input, { source: label });
    // The engine checks its own table's lists; a route's rules would otherwise match nothing, silently.
    const missing = (compiled.lists ?? []).filter(
      (name) => lists === undefined || !Object.hasOwn(lists, name),
    );
    if (missing.length > 0)
      throw new ConfigError(
        `${label}: the rules name lists not given in the lists option: ${missing.join(', ')}`,
      );
    for (const { name } of compiled.rules) {
      const global = limiter.rules.rules.some((rule) => rule.name === name);
      const owner = global ? 'a global rule' : owners.get(name);
      if (owner !== undefined)
        throw new ConfigError(`${label}: rule name "${name}" is already used by ${owner}`);
    }
    for (const { name } of compiled.rules) owners.set(name, label);
    return compiled;
  };
}
