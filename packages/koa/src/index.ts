import type { Limiter, RuleSpec } from '@sluice/core';
import {
  type CheckScope,
  createHttpLimiter,
  type DeniedResponse,
  type InlineLimit,
  type ProxyTrust,
  type RateLimitInfo,
  type RateLimitOptions,
  type RequestFacts,
  type RouteOptions,
  reportWhenDone,
  setHeaders,
  type Verdict,
  verdictWriter,
  waitUnlessClosed,
} from '@sluice/core/http';
import type { Context, Middleware, Next } from 'koa';
import { type RouteMiddlewares, routeOf } from './routes.js';

declare module 'koa' {
  interface DefaultState {
    /** This request's limit as its RateLimit headers show it (set by @sluice/koa). */
    rateLimit?: RateLimitInfo;
  }
}

/** Options of the Koa middleware: the shared adapter options (functions take the context) plus `onDenied`. */
export interface KoaRateLimitOptions extends RateLimitOptions<Context> {
  /**
   * Sets your own denial on the context. When it sets none (or throws), the default is sent: a JSON 429
   * (503 when a rule failed closed).
   */
  onDenied?: (ctx: Context, denied: DeniedResponse) => unknown;
}

/** The global middleware, with per-route middleware and the limiter behind both. */
export interface KoaRateLimit extends Middleware {
  /**
   * Middleware adding rules for one route (`router.get('/search', limiter.route({...rule}), handler)`), or
   * the shorthand (`limiter.route({limit: 5, per: '1m'})`), compiled once here. The global middleware finds
   * the route a request goes to and checks its rules with the global ones, in one store call (all or nothing).
   * With `{afterBody: true}`, this middleware does (put it after the body parser): `cost(ctx)` reads
   * `ctx.request.body`.
   */
  route(
    rules: RuleSpec | readonly RuleSpec[] | (InlineLimit & RouteOptions),
    options?: RouteOptions,
  ): Middleware;
  readonly limiter: Limiter;
}

const ALL_RULES: CheckScope = Object.freeze({});
const nothing = (): void => {};

/** Koa middleware: `app.use(rateLimit(options))`. Without options: 60 requests a minute per IP. */
export function rateLimit(options?: KoaRateLimitOptions): KoaRateLimit {
  // Mounted with app.use, the middleware runs before @koa/router: it finds the template itself (routes.ts).
  const http = createHttpLimiter<Context, KoaRateLimitOptions>(options, { globalSeesPaths: true });

  /** This limiter's route middleware, each with the scope the global middleware checks for its route. */
  const routeMiddlewares: RouteMiddlewares = new WeakMap();
  let routeLimited = false;

  // No async function: a request decided in process goes on to `next` without an extra promise.
  function sluiceRateLimit(ctx: Context, next: Next): Promise<void> {
    // Only apps with limiter.route() or rules reading `route` look the route up.
    const route = routeLimited || http.readsRoute() ? routeOf(ctx, routeMiddlewares) : undefined;
    // A route decided after its body is parsed: its middleware checks the global rules too.
    if (route?.scope.afterBody === true) return next();
    const verdict =
      route === undefined
        ? http.check(ctx, new KoaFacts(ctx, undefined), ALL_RULES)
        : http.check(ctx, new KoaFacts(ctx, route.template), route.scope);
    return settle(ctx, next, verdict);
  }

  /** A route's middleware: its rules alone, unless the global middleware checked them already. */
  function routeMiddleware(
    rules: RuleSpec | readonly RuleSpec[] | (InlineLimit & RouteOptions),
    options?: RouteOptions,
  ): Middleware {
    const scope = http.routeScope(rules, options);
    const handler = function sluiceRouteRateLimit(ctx: Context, next: Next): Promise<void> {
      return settle(ctx, next, http.check(ctx, new KoaFacts(ctx, undefined), scope));
    };
    routeMiddlewares.set(handler, { rules: scope.rules, afterBody: scope.afterBody });
    routeLimited = true;
    return handler;
  }

  function settle(ctx: Context, next: Next, verdict: Verdict | Promise<Verdict>): Promise<void> {
    if (verdict instanceof Promise) return verdict.then((settled) => act(ctx, ctx, next, settled));
    return act(ctx, ctx, next, verdict);
  }

  const { onDenied } = http.options;
  // Koa's middleware gets the context alone: it stands for both the request and the response here.
  const act = verdictWriter<Context, Context, Next, Promise<void>>(
    {
      proceed: (_ctx, _same, next) => next(),
      stop: () => Promise.resolve(),
      later: (_ctx, _same, _next, pending) => pending.then(nothing),
      setInfo: (ctx, _same, info) => {
        ctx.state.rateLimit = info;
      },
      sent: (ctx) => ctx.headerSent,
      // Node's own setHeader: what ctx.set comes to for text values, without its per-field wrapper.
      setHeaders: (ctx, _same, headers) => setHeaders(ctx.res, headers),
      whenDone: (ctx, _same, next, onResponse) => {
        reportWhenDone(ctx.res, onResponse);
        return next;
      },
      wait: (ctx, _same, ms) => waitUnlessClosed(ctx.res, ms),
      left: nothing,
      onDenied: onDenied && ((ctx, _same, denied) => onDenied(ctx, denied)),
      // What onDenied set stands, as in Express and Fastify; one that threw gets the default.
      answered: (ctx, _same, _own, threw) => (!threw && setResponse(ctx) ? ctx : undefined),
      sendDenied: (ctx, _same, denied) => {
        ctx.status = denied.status;
        ctx.set(denied.headers);
        ctx.body = denied.body;
      },
    },
    http.report,
  );

  return Object.assign(sluiceRateLimit, { route: routeMiddleware, limiter: http.limiter });
}

/** True once the context holds a response: a body, a status other than Koa's untouched 404, or bytes sent. */
function setResponse(ctx: Context): boolean {
  return ctx.body != null || ctx.status !== 404 || ctx.headerSent || ctx.respond === false;
}

/**
 * What the limiter reads off a Koa context; a class, so no closure is made per request. The address at once
 * (most rule sets key by it), the rest when a rule or a notice reads it: each goes through Koa's delegates.
 */
class KoaFacts implements RequestFacts {
  readonly ip: string;
  readonly #ctx: Context;
  readonly #template: string | undefined;

  /** `template`: the route the global middleware found for the request, before the router ran. */
  constructor(ctx: Context, template: string | undefined) {
    this.ip = ctx.ip;
    this.#ctx = ctx;
    this.#template = template;
  }

  get method(): string {
    return this.#ctx.method;
  }

  get url(): string {
    return this.#ctx.originalUrl;
  }

  get route(): string | undefined {
    const matched: unknown = this.#template ?? (this.#ctx as { _matchedRoute?: unknown })._matchedRoute;
    return typeof matched === 'string' ? matched : undefined;
  }

  /** Only read until every start-up notice has been given. */
  get proxyTrust(): ProxyTrust {
    const { app } = this.#ctx;
    // Koa with app.proxy and no maxIpsCount takes the leftmost X-Forwarded-For entry, which the client writes.
    return !app.proxy ? 'none' : app.maxIpsCount > 0 ? 'bounded' : 'all';
  }

  header(name: string): string | readonly string[] | undefined {
    return this.#ctx.req.headers[name];
  }
}
