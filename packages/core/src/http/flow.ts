import type { CheckOptions, Limiter } from '../engine.js';
import { ConfigError } from '../errors.js';
import { isThenable, type Maybe } from '../maybe.js';
import type { RuleSpec } from '../rules/schema.js';
import type { CompiledRules, Decision, Descriptors, RuleResult } from '../types.js';

export type { CheckScope } from './notes.js';
export type { Verdict } from './verdict.js';

import { afterBodyOf, type RouteOptions, type RouteScope, splitAfterBody } from './afterBody.js';
import { buildDescriptors, headerApiKey } from './descriptors.js';
import type { RequestFacts } from './facts.js';
import { adapterReporter, runHook, validCost } from './hooks.js';
import { type InlineLimit, inlineRules, isInlineLimit, parseInlineLimit } from './inline.js';
import { retryJitterOf } from './jitter.js';
import { ALL_RULES, type CheckScope, notesOf, remainingScope } from './notes.js';
import { NoticeWatch } from './notices.js';
import { type AdapterStage, type RateLimitOptions, type ResolvedOptions, resolveOptions } from './options.js';
import { limiterFor, routeRuleCompiler } from './rules-option.js';
import { shownResult } from './shown.js';
import { type UsedDescriptors, usedByBoth, usedDescriptors } from './used.js';
import { allowVerdict, denyVerdict, type Verdict } from './verdict.js';

/**
 * Whether an observer's `onDecision` may read the descriptors: unless it declares exactly one parameter
 * (`onDecision(decision)`, as @sluice/prometheus does), it is given every built-in descriptor. Arity, as
 * Express tells error middleware apart: `(...args)` or a default parameter (length 0) counts as reading.
 */
export function readsDescriptors(
  observer: { onDecision?: (...args: never[]) => unknown } | undefined,
): boolean {
  const onDecision = observer?.onDecision;
  return onDecision !== undefined && onDecision.length !== 1;
}

/** `next(value)`, at once when the value is there, after it resolves when it is a promise or any thenable. */
function then<T, U>(value: Maybe<T>, next: (value: T) => Maybe<U>): Maybe<U> {
  return isThenable(value) ? value.then(next) : next(value);
}

const SKIP: Verdict = Object.freeze({ action: 'skip' });
const NO_OPTIONS: CheckOptions = Object.freeze({});

/** What an adapter's global middleware can know of a request, for the notices that depend on it. */
export interface AdapterTraits<Req = never> {
  /**
   * True when the global middleware runs before the router (Express, Koa) and sees a path, not the route
   * template, whenever the request's facts carry no `route`.
   */
  readonly globalSeesPaths?: boolean;
  /**
   * True when the adapter checks each request once, its global and route rules in one call (Fastify's one
   * hook): then nothing need be noted on the request object about what was checked or shown.
   */
  readonly checksOnce?: boolean;
  /**
   * The object this limiter's notes on a request are kept on (see notes.ts); the request itself by default.
   * Express gives `res.locals` when it can: a property added to an Express request costs microseconds (its
   * prototype is swapped per request), one added to `res.locals`, a dictionary, a fraction of that.
   */
  readonly notesOn?: (req: Req) => unknown;
}

/** The per-request flow every adapter shares, built once at start-up. */
export interface HttpLimiter<Req, O extends RateLimitOptions<Req> = RateLimitOptions<Req>> {
  readonly limiter: Limiter;
  readonly options: O & ResolvedOptions<Req>;
  /**
   * Decides one request; never throws or rejects: a limiter failure lets the request through and is
   * reported. The verdict itself when nothing had to be awaited (in-process stores, synchronous hooks),
   * else a (native) promise of it.
   */
  check(req: Req, facts: RequestFacts, scope?: CheckScope): Maybe<Verdict>;
  /** Tells the observer (and the log, once per stage) of a failure inside the adapter. */
  report(error: unknown, stage: AdapterStage): void;
  /**
   * Compiles route-level rules once, at route registration; throws RulesError/ConfigError when wrong, or
   * when a name is taken (by a global rule or another route's): share counters by sharing the compiled rules.
   */
  compileRouteRules(rules: unknown, label: string): CompiledRules;
  /**
   * The scope of a per-route middleware (`limiter.route(...)` in Express, Koa and Hono): its rules (or
   * shorthand) only, the global ones having been checked by the global middleware already; with `afterBody`
   * (in `options` or the shorthand) the global ones too: the global middleware leaves the route's requests to it.
   */
  routeScope(
    rules: RuleSpec | readonly RuleSpec[] | (InlineLimit & RouteOptions),
    options?: RouteOptions,
  ): RouteScope;
  /**
   * Compiles a route's config (Fastify `config.rateLimit`): `{rules: [...]}`, or the shorthand `{limit, per,
   * key?, name?}` with its rule named `name`, else `defaultName`; either with `afterBody` (see afterBody.ts).
   * Throws ConfigError/RulesError naming `label`.
   */
  compileRouteConfig(config: unknown, label: string, defaultName: string): CompiledRules;
  /**
   * True when a rule of the current global table reads `route` (in `match` or `key`): only then does an
   * adapter whose global middleware runs before the router look the route template up. Asked per request, so
   * a reloaded table that starts or stops reading `route` takes effect with its first request.
   */
  readsRoute(): boolean;
}

/**
 * Validates the options, compiles the rules and builds the limiter, once; throws ConfigError or
 * RulesError at start-up when something is wrong, never later.
 */
export function createHttpLimiter<Req, O extends RateLimitOptions<Req>>(
  given: O | undefined,
  traits: AdapterTraits<Req> = {},
): HttpLimiter<Req, O> {
  const options = resolveOptions<Req, O>(given);
  const limiter = limiterFor(options);
  const compileRoute = routeRuleCompiler(limiter, options.lists);
  // What this limiter noted on a request object: a property, not a WeakMap entry (those cost the garbage
  // collector on every request). A symbol of its own per limiter, so two limiters never mix their notes.
  const seen = Symbol('sluice.seen');
  const { notesOn } = traits;
  const notesFor = (req: Req) => notesOf(notesOn === undefined ? req : notesOn(req), seen);
  const clock = options.clock ?? Date.now;
  // Keys read from the header unchecked: rules keyed by api_key deserve a notice.
  const rawKeys = options.apiKey === undefined && options.validateApiKey === undefined;
  const notices = new NoticeWatch({
    logger: options.logger,
    ...(options.silence ? { silence: options.silence } : {}),
    rawKeys,
    globalSeesPaths: traits.globalSeesPaths === true,
  });
  /** Shorthand `limiter.route()` calls so far: their default rule names. */
  let inlineRoutes = 0;

  const report = adapterReporter(options.logger, options.observer);

  function hook<T>(stage: AdapterStage, call: () => T | Promise<T>): Maybe<T | undefined> {
    return runHook(report, stage, call);
  }

  /** Hooks in order (api key and its validation, descriptors, cost), then the engine; the verdict. */
  function decideWithHooks(req: Req, facts: RequestFacts, scope: CheckScope): Maybe<Verdict> {
    const { descriptors } = options;
    return then(apiKeyOf(req, facts), (keyValue) => {
      const own = descriptors ? hook('descriptors', () => descriptors(req)) : undefined;
      return then(own, (ownValue) => {
        notices.descriptors(ownValue);
        const extra = rawKeys ? { descriptors: ownValue } : { apiKey: keyValue, descriptors: ownValue };
        const cost = options.cost ? hook('cost', () => options.cost?.(req)) : undefined;
        return then(cost, (costValue) =>
          judge(req, buildDescriptors(facts, options, extra, usedBy(scope), onlyUsed), costValue, scope),
        );
      });
    });
  }

  /** No hook configured (no API key reader or validator, no descriptors, no cost): no continuation at all. */
  function decideWithoutHooks(req: Req, facts: RequestFacts, scope: CheckScope): Maybe<Verdict> {
    return judge(req, buildDescriptors(facts, options, undefined, usedBy(scope), onlyUsed), undefined, scope);
  }

  // Built-in descriptors no rule reads are left out, unless the decision log or a decision observer that
  // takes them (see readsDescriptors) is given the request's descriptors.
  const onlyUsed = options.decisionLog === undefined && !readsDescriptors(options.observer);
  // The request path is chosen once, from the options: a request pays only for the hooks the app gave.
  const hooked = !rawKeys || options.descriptors !== undefined || options.cost !== undefined;
  const decide = hooked ? decideWithHooks : decideWithoutHooks;

  // The limiter's table changes only on a reload: its descriptor names are looked up again only then.
  let usedTable: CompiledRules | undefined;
  let usedGlobal: UsedDescriptors = new Set();

  /** The descriptor names the rules of this check read (the limiter's own and the route's). */
  function usedBy(scope: CheckScope): UsedDescriptors {
    const table = limiter.rules;
    if (table !== usedTable) {
      usedTable = table;
      usedGlobal = usedDescriptors(table);
    }
    return scope.rules === undefined ? usedGlobal : usedByBoth(usedGlobal, usedDescriptors(scope.rules));
  }

  /**
   * The request's API key when the app reads or validates it (`apiKey`, `validateApiKey`); undefined when
   * there is none or the validator refused it (so the request is anonymous). Read from the header by
   * buildDescriptors otherwise.
   */
  function apiKeyOf(req: Req, facts: RequestFacts): Maybe<unknown> {
    const { apiKey, validateApiKey } = options;
    if (rawKeys) return undefined;
    const key = apiKey ? hook('api_key', () => apiKey(req)) : headerApiKey(facts, options);
    if (validateApiKey === undefined) return key;
    return then(key, (value) => {
      if (typeof value !== 'string' || value === '') return undefined;
      const notes = notesFor(req);
      const judged = notes?.judgedKey;
      if (judged !== undefined && judged.key === value) return judged.valid ? value : undefined;
      // A validator that throws refuses the key: failing towards the per-IP rules is the safe side.
      const valid = hook('validate_api_key', () => validateApiKey(value, req));
      return then(valid, (ok) => {
        if (notes !== undefined) notes.judgedKey = { key: value, valid: ok === true };
        return ok === true ? value : undefined;
      });
    });
  }

  function judge(
    req: Req,
    descriptors: Descriptors,
    cost: number | undefined,
    scope: CheckScope,
  ): Maybe<Verdict> {
    const valid = validCost(report, cost);
    const checkOptions: CheckOptions =
      valid === undefined && scope.rules === undefined && scope.global !== false
        ? NO_OPTIONS
        : { cost: valid, rules: scope.rules, global: scope.global };
    let decision: Decision | Promise<Decision>;
    try {
      decision = limiter.decide(descriptors, checkOptions);
    } catch (error) {
      report(error, 'check');
      return SKIP;
    }
    if (!isThenable(decision)) return verdictOf(req, decision, scope);
    return decision.then(
      (settled) => verdictOf(req, settled, scope),
      (error: unknown) => {
        report(error, 'check');
        return SKIP;
      },
    );
  }

  function verdictOf(req: Req, decision: Decision, scope: CheckScope): Verdict {
    if (!decision.allowed) {
      const jitter = retryJitterOf(decision, limiter.rules, scope.rules);
      return denyVerdict(decision, options.headers, clock, jitter);
    }
    return allowVerdict(decision, shownFor(req, decision), options.headers, clock, limiter, report);
  }

  const checksOnce = traits.checksOnce === true;

  function effectiveScope(req: Req, scope: CheckScope): CheckScope | undefined {
    return checksOnce ? scope : remainingScope(notesFor(req), scope);
  }

  function check(req: Req, facts: RequestFacts, requested: CheckScope = ALL_RULES): Maybe<Verdict> {
    const scope = effectiveScope(req, requested);
    notices.request(facts, scope === undefined || scope.global === false ? undefined : limiter.rules);
    if (scope === undefined) return SKIP;
    const { skip } = options;
    const verdict = skip
      ? then(
          hook('skip', () => skip(req)),
          (skipped) => (skipped === true ? SKIP : decide(req, facts, scope)),
        )
      : decide(req, facts, scope);
    // A user hook may return any thenable: adapters get a verdict or a native promise, nothing else.
    return isThenable(verdict) && !(verdict instanceof Promise) ? Promise.resolve(verdict) : verdict;
  }

  /**
   * The rule an allowed response's headers show. Global and route checks run apart in Express and Koa: the
   * most constrained of both, chosen as in one call (Fastify), so every adapter shows the same rule.
   */
  function shownFor(req: Req, decision: Decision): RuleResult | undefined {
    if (checksOnce) return shownResult(decision.results, undefined);
    const notes = notesFor(req);
    const shown = shownResult(decision.results, notes?.shown);
    if (notes !== undefined) notes.shown = shown;
    return shown;
  }

  /** Route-level rules, compiled once; rules keyed by api_key counting raw header values get a notice. */
  function compileRouteRules(rules: unknown, label: string): CompiledRules {
    const compiled = compileRoute(rules, label);
    notices.routeRules(compiled);
    return compiled;
  }

  function routeScope(
    given: RuleSpec | readonly RuleSpec[] | (InlineLimit & RouteOptions),
    options?: RouteOptions,
  ): RouteScope {
    const split = isInlineLimit(given) ? splitAfterBody(given, 'limiter.route()') : undefined;
    const afterBody = afterBodyOf(options, 'limiter.route() options') || split?.afterBody === true;
    // After the body, the route's middleware checks the global rules too (its global middleware left them).
    const global = afterBody;
    if (split !== undefined) return { rules: inlineRouteRules(split.config), global, afterBody };
    const list: readonly RuleSpec[] = Array.isArray(given) ? given : [given as RuleSpec];
    const label = `limiter.route(${list.map((rule) => String(rule?.name)).join(', ')})`;
    return { rules: compileRouteRules(list, label), global, afterBody };
  }

  /** `limiter.route({limit, per})`: its rule is named `name`, else `route_<n>` by declaration order. */
  function inlineRouteRules(given: InlineLimit): CompiledRules {
    inlineRoutes += 1;
    const label = `limiter.route({limit: ${String(given.limit)}, per: ${JSON.stringify(given.per)}})`;
    return compileInline(given, label, `route_${inlineRoutes}`);
  }

  function compileInline(given: unknown, label: string, defaultName: string): CompiledRules {
    const inline = parseInlineLimit(given, label);
    return compileRouteRules(inlineRules(inline, inline.name ?? defaultName), label);
  }

  function compileRouteConfig(given: unknown, label: string, defaultName: string): CompiledRules {
    // `afterBody` is when the route is decided, not what: the adapter reads it (afterBodyOf).
    const { config } = splitAfterBody(given, label);
    if (isInlineLimit(config)) return compileInline(config, label, defaultName);
    if (typeof config !== 'object' || config === null)
      throw new ConfigError(`${label}: config.rateLimit must be false, {rules: [...]} or {limit, per}`);
    return compileRouteRules((config as { rules?: unknown }).rules, label);
  }

  const readsRoute = (): boolean => usedBy(ALL_RULES).has('route');

  return { limiter, options, check, compileRouteRules, compileRouteConfig, routeScope, report, readsRoute };
}
