import type { Limiter } from '../engine/engine.js';
import type { RequestFacts } from '../request/facts.js';
import type { RuleSpec } from '../rules/schema.js';
import type { RouteOptions, RouteScope } from './afterBody.js';
import type { HttpLimiter } from './flow.js';
import type { InlineLimit } from './inline.js';
import { ALL_RULES } from './notes.js';
import type { Verdict } from './verdict.js';
import type { VerdictWriter } from './writer.js';

/** The route a request will be served by, and the scope the global middleware checks for it. */
export interface LimitedRoute {
  readonly scope: RouteScope;
  /** The route's template (`/users/:id`), mount paths and prefixes included; `UNMATCHED_ROUTE` for a 404. */
  readonly template: string;
}

/** A limiter's route middleware (`limiter.route(...)`), each with the scope it checks. */
export type RouteMiddlewares = WeakMap<object, RouteScope>;

/** The rules `limiter.route()` takes: rules, or the shorthand `{limit, per}`. */
export type RouteRules = RuleSpec | readonly RuleSpec[] | (InlineLimit & RouteOptions);

/**
 * What only a framework whose global middleware runs before (or beside) its router knows:
 * how it finds a request's route, where the request's facts live, and its middleware's signature.
 */
export interface RoutedFramework<A, B, N, R, H> {
  /** The route the request goes to, and the first of `ours` on it; undefined when this cannot be told. */
  routeOf(a: A, b: B, ours: RouteMiddlewares): LimitedRoute | undefined;
  /** The request's facts; `template` is the route found by `routeOf`, undefined when not looked up. */
  facts(a: A, b: B, template: string | undefined): RequestFacts;
  /** The request's facts in a route's middleware; default: `facts` without a template. */
  routeFacts?(a: A, b: B): RequestFacts;
  /** The framework's middleware calling `run` (one that takes the context once: `run(c, c, next)`). */
  middleware(run: (a: A, b: B, next: N) => R): H;
  /** The layer's verdict writer (nodeVerdictWriter, fetchVerdictWriter). */
  readonly act: VerdictWriter<A, B, N, R>;
  /** Told once `limiter.route()` was first called (the global middleware then looks every route up). */
  onRouteLimited?(): void;
}

/** A framework's global middleware `H`, with per-route middleware and the limiter behind both. */
export type RateLimitMiddleware<H> = H & {
  /**
   * Middleware adding rules for one route (`app.get('/search', limiter.route({...rule}), handler)`), or the
   * shorthand (`limiter.route({limit: 5, per: '1m'})`), compiled once here. The global middleware finds the
   * route a request goes to and checks its rules with the global ones, in one store call (all or nothing).
   * With `{afterBody: true}`, this middleware checks both (put it after the body parser): `cost` reads the body.
   */
  route(rules: RouteRules, options?: RouteOptions): H;
  readonly limiter: Limiter;
};

const SKIP: Verdict = Object.freeze({ action: 'skip' });

/**
 * The global and route middleware every such framework shares: the global middleware checks the global rules
 * with those of the request's route, in one store call, when it finds the route; a route's middleware checks
 * its rules alone unless the global one did (or all of them, for a route decided after its body).
 */
export function routedMiddleware<A, B, N, R, H extends object>(
  http: Pick<HttpLimiter<A>, 'check' | 'readsRoute' | 'routeScope' | 'limiter'>,
  framework: RoutedFramework<A, B, N, R, H>,
): RateLimitMiddleware<H> {
  const ours: RouteMiddlewares = new WeakMap();
  let routeLimited = false;
  const { act } = framework;
  const routeFacts = framework.routeFacts ?? ((a: A, b: B) => framework.facts(a, b, undefined));

  // No async function: a request decided in process goes on without waiting on a promise.
  function sluiceRateLimit(a: A, b: B, next: N): R {
    // Only apps with limiter.route() or rules reading `route` look the route up.
    const route = routeLimited || http.readsRoute() ? framework.routeOf(a, b, ours) : undefined;
    // A route decided after its body is parsed: its middleware checks the global rules too.
    if (route?.scope.afterBody === true) return act(a, b, next, SKIP);
    if (route === undefined)
      return act(a, b, next, http.check(a, framework.facts(a, b, undefined), ALL_RULES));
    return act(a, b, next, http.check(a, framework.facts(a, b, route.template), route.scope));
  }

  function route(rules: RouteRules, options?: RouteOptions): H {
    const scope = http.routeScope(rules, options);
    const handler = framework.middleware(function sluiceRouteRateLimit(a: A, b: B, next: N): R {
      return act(a, b, next, http.check(a, routeFacts(a, b), scope));
    });
    // What the global middleware checks for the route: its rules with the global ones (`global` left out).
    ours.set(handler, { rules: scope.rules, afterBody: scope.afterBody });
    if (!routeLimited) framework.onRouteLimited?.();
    routeLimited = true;
    return handler;
  }

  return Object.assign(framework.middleware(sluiceRateLimit), { route, limiter: http.limiter });
}

/**
 * The scope of the first of `ours` among a route's handlers (`handlerOf` maps a router's entry to its handler,
 * undefined to pass it over); undefined when none is.
 */
export function firstScope<E>(
  entries: Iterable<E>,
  ours: RouteMiddlewares,
  handlerOf: (entry: E) => unknown = (entry) => entry,
): RouteScope | undefined {
  for (const entry of entries) {
    const handler = handlerOf(entry);
    const scope = typeof handler === 'function' ? ours.get(handler) : undefined;
    if (scope !== undefined) return scope;
  }
  return undefined;
}
