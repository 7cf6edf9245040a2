import type { Maybe } from '../base/maybe.js';
import type { Limiter } from '../engine/engine.js';
import type { CompiledRules } from '../rules/contract.js';
import type { RuleSpec } from '../rules/schema.js';

export { ALL_RULES, type CheckScope } from './notes.js';
export type { Verdict } from './verdict.js';

import { createEscalation } from '../escalation/index.js';
import { DRAFT_NAMES, LOWER_CASE_NAMES } from '../fields/responses.js';
import type { RequestFacts } from '../request/facts.js';
import type { RouteOptions, RouteScope } from './afterBody.js';
import { adapterReporter } from './hooks.js';
import type { InlineLimit } from './inline.js';
import { ALL_RULES, type CheckScope, notesOf } from './notes.js';
import { NoticeWatch } from './notices.js';
import type { AdapterStage, RateLimitOptions, ResolvedOptions } from './options.js';
import {
  checkRequest,
  decideWithHooks,
  decideWithoutHooks,
  type RequestFlow,
  readsRoute,
} from './requestFlow.js';
import { compileRouteConfig, compileRouteRules, type RouteCompiling, routeScope } from './routeRules.js';
import { limiterFor, routeRuleCompiler } from './rules-option.js';
import { type HttpSettings, resolveSettings } from './settings.js';
import type { Verdict } from './verdict.js';

/**
 * Whether an observer's `onDecision` may read the descriptors: unless it declares exactly one parameter
 * (`onDecision(decision)`, as @sluice/prometheus does), it is given every built-in descriptor. Arity, as
 * Node middleware stacks tell error middleware apart: `(...args)` or a default parameter (length 0) counts as reading.
 */
export function readsDescriptors(
  observer: { onDecision?: (...args: never[]) => unknown } | undefined,
): boolean {
  const onDecision = observer?.onDecision;
  return onDecision !== undefined && onDecision.length !== 1;
}

/** What an adapter's global middleware can know of a request, for the notices that depend on it. */
export interface AdapterTraits<Req = never> {
  /**
   * True when the global middleware runs before the router and sees a path, not the route
   * template, whenever the request's facts carry no `route`.
   */
  readonly globalSeesPaths?: boolean;
  /**
   * True when the adapter checks each request once, its global and route rules in one call (one
   * hook): then nothing need be noted on the request object about what was checked or shown.
   */
  readonly checksOnce?: boolean;
  /**
   * True when the framework sends every header name in lower case, whatever it is given: an allowed
   * response's rate-limit fields are named so, and it need not lower-case each name of each response.
   */
  readonly lowerCaseHeaders?: boolean;
  /**
   * The object this limiter's notes on a request are kept on (see notes.ts); the request itself by default.
   * An adapter may give a dictionary of its own (`res.locals`): a property added to a request whose prototype is swapped per request costs microseconds (its
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
   * The scope of a per-route middleware (`limiter.route(...)`): its rules (or
   * shorthand) only, the global ones having been checked by the global middleware already; with `afterBody`
   * (in `options` or the shorthand) the global ones too: the global middleware leaves the route's requests to it.
   */
  routeScope(
    rules: RuleSpec | readonly RuleSpec[] | (InlineLimit & RouteOptions),
    options?: RouteOptions,
  ): RouteScope;
  /**
   * Compiles a route's config (`config.rateLimit`, say): `{rules: [...]}`, or the shorthand `{limit, per,
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
 * RulesError at start-up when something is wrong, never later. The request flow is requestFlow.ts, route
 * compiling routeRules.ts.
 */
export function createHttpLimiter<Req, O extends RateLimitOptions<Req>>(
  given: O | undefined,
  traits: AdapterTraits<Req> = {},
): HttpLimiter<Req, O> {
  const settings = resolveSettings<Req, O>(given);
  const { options } = settings;
  const limiter = limiterFor(settings.limiter);
  const flow = requestFlowOf(settings, limiter, traits);
  const compile = routeRuleCompiler(limiter, options.lists);
  const routes: RouteCompiling = {
    // A route's rule with `challenge` needs the secret as a global one does.
    compile: (...args) => {
      const table = compile(...args);
      flow.escalation.noteRoute(table);
      return table;
    },
    notices: flow.notices,
    inlineRoutes: 0,
  };
  return {
    limiter,
    options,
    report: flow.report,
    check: (req, facts, scope = ALL_RULES) => checkRequest(flow, req, facts, scope),
    compileRouteRules: (rules, label) => compileRouteRules(routes, rules, label),
    compileRouteConfig: (config, label, defaultName) =>
      compileRouteConfig(routes, config, label, defaultName),
    routeScope: (rules, routeOptions) => routeScope(routes, rules, routeOptions),
    readsRoute: () => readsRoute(flow),
  };
}

/** The request flow's settings, chosen once from the resolved options and the adapter's traits. */
function requestFlowOf<Req, O extends RateLimitOptions<Req>>(
  settings: HttpSettings<Req, O>,
  limiter: Limiter,
  traits: AdapterTraits<Req>,
): RequestFlow<Req> {
  const { options, clock, log } = settings;
  // Keys read from the header unchecked: rules keyed by api_key deserve a notice.
  const rawKeys = options.apiKey === undefined && options.validateApiKey === undefined;
  const hooked = !rawKeys || options.descriptors !== undefined || options.cost !== undefined;
  return {
    options,
    limiter,
    notices: new NoticeWatch({
      ...settings.notices,
      rawKeys,
      globalSeesPaths: traits.globalSeesPaths === true,
    }),
    report: adapterReporter(options.logger, options.observer),
    descriptors: settings.descriptors,
    clock,
    notesFor: notesReader(traits.notesOn),
    rawKeys,
    // Built-in descriptors no rule reads are left out, unless the decision log or a decision observer that
    // takes them (see readsDescriptors) is given the request's descriptors.
    onlyUsed: options.decisionLog === undefined && !readsDescriptors(options.observer),
    checksOnce: traits.checksOnce === true,
    headerNames: traits.lowerCaseHeaders === true ? LOWER_CASE_NAMES : DRAFT_NAMES,
    decide: hooked ? decideWithHooks : decideWithoutHooks,
    usedTable: undefined,
    usedGlobal: new Set(),
    escalation: createEscalation({
      challenge: settings.challenge,
      limiter,
      clock,
      observer: options.observer,
      log,
    }),
  };
}

/**
 * What this limiter noted on a request object: a property, not a WeakMap entry (those cost the garbage
 * collector on every request). A symbol of its own per limiter, so two limiters never mix their notes.
 */
function notesReader<Req>(notesOn: ((req: Req) => unknown) | undefined): RequestFlow<Req>['notesFor'] {
  const seen = Symbol('sluice.seen');
  return (req) => notesOf(notesOn === undefined ? req : notesOn(req), seen);
}
