import { getConnInfo as nodeConnInfo } from '@hono/node-server/conninfo';
import { ConfigError, type Limiter, type RuleSpec } from '@sluice/core';
import {
  type CheckScope,
  createHttpLimiter,
  type DeniedResponse,
  FetchFacts,
  type ForwardedTrust,
  forwardedTrust,
  type InlineLimit,
  type RateLimitInfo,
  type RateLimitOptions,
  type RouteOptions,
  type TrustProxy,
  type Verdict,
  verdictWriter,
} from '@sluice/core/http';
import type { Context, MiddlewareHandler, Next } from 'hono';
import type { GetConnInfo } from 'hono/conninfo';
import { routePath } from 'hono/route';
import { reportingNext, waitUnlessGone } from './lifecycle.js';
import { type RouteMiddlewares, routeOf } from './routes.js';

declare module 'hono' {
  interface ContextVariableMap {
    /** This request's limit as its RateLimit headers show it (set by @sluice/hono). */
    rateLimit?: RateLimitInfo;
  }
}

/** Options of the Hono middleware: the shared adapter options (functions take the context) plus Hono's own. */
export interface HonoRateLimitOptions extends RateLimitOptions<Context> {
  /**
   * Builds your own denial: return a Response (or set `c.res`). When it gives none (or throws), the default is
   * sent: a JSON 429 (503 when a rule failed closed).
   */
  onDenied?: (c: Context, denied: DeniedResponse) => Response | undefined | Promise<Response | undefined>;
  /**
   * Which proxies may name the client in X-Forwarded-For (Hono has no setting of its own): `false` (default),
   * `true` (every hop: a client can then pick its own IP), a hop count, or proxy addresses and CIDR ranges.
   */
  trustProxy?: TrustProxy;
  /** The runtime's connection info helper. Default: @hono/node-server's `getConnInfo`. */
  getConnInfo?: GetConnInfo;
}

/** The global middleware, with per-route middleware and the limiter behind both. */
export interface HonoRateLimit extends MiddlewareHandler {
  /**
   * Middleware adding rules for one route (`app.get('/search', limiter.route({...rule}), handler)`), or the
   * shorthand (`limiter.route({limit: 5, per: '1m'})`), compiled once here; the global rules, already checked
   * by the global middleware, are not recounted. With `{afterBody: true}`, this middleware checks both, and an
   * async `cost(c)` may read `await c.req.json()` (Hono keeps the parsed body for the handler).
   */
  route(
    rules: RuleSpec | readonly RuleSpec[] | (InlineLimit & RouteOptions),
    options?: RouteOptions,
  ): MiddlewareHandler;
  readonly limiter: Limiter;
}

/** Hono middleware: `app.use(rateLimit(options))`. Without options: 60 requests a minute per IP. */
export function rateLimit(options?: HonoRateLimitOptions): HonoRateLimit {
  const { trustProxy, getConnInfo = nodeConnInfo, ...shared } = options ?? {};
  const trust = forwardedTrust(trustProxy);
  if (typeof getConnInfo !== 'function')
    throw new ConfigError('invalid rate limit options: option "getConnInfo": must be a function');
  // Hono has matched the routes before the global middleware runs: it reads the template there (routes.ts).
  const http = createHttpLimiter<Context, HonoRateLimitOptions>(options && shared, { globalSeesPaths: true });

  /** This limiter's route middleware, each with the scope the global middleware checks for its route. */
  const routeMiddlewares: RouteMiddlewares = new WeakMap();
  let routeLimited = false;

  const facts = (c: Context, route: string | undefined): FetchFacts =>
    new FetchFacts(c.req.raw, clientAddress(c, trust, getConnInfo), trust.trust, route);

  /** Hono has matched the request's handlers already: a route's rules are checked here, in the same call. */
  function sluiceRateLimit(c: Context, next: Next): Promise<Response | undefined> {
    // Only apps with limiter.route() or rules reading `route` look the route up.
    const route = routeLimited || http.readsRoute() ? routeOf(c, routeMiddlewares) : undefined;
    // A route decided after its body is read: its middleware checks the global rules too.
    if (route?.scope?.afterBody === true) return next().then(nothing);
    const scope = route?.scope === undefined ? ALL_RULES : { rules: route.scope.rules };
    const verdict = http.check(c, facts(c, route?.template), scope);
    return settle(c, next, verdict);
  }

  /** A route's middleware: its rules alone, unless the global middleware checked them already. */
  function routeMiddleware(
    rules: RuleSpec | readonly RuleSpec[] | (InlineLimit & RouteOptions),
    options?: RouteOptions,
  ): MiddlewareHandler {
    const scope = http.routeScope(rules, options);
    const handler = function sluiceRouteRateLimit(c: Context, next: Next): Promise<Response | undefined> {
      return settle(c, next, http.check(c, facts(c, routePath(c)), scope));
    };
    routeMiddlewares.set(handler, scope);
    routeLimited = true;
    return handler;
  }

  function settle(
    c: Context,
    next: Next,
    verdict: Verdict | Promise<Verdict>,
  ): Promise<Response | undefined> {
    return verdict instanceof Promise
      ? verdict.then((settled) => act(c, c, next, settled))
      : act(c, c, next, verdict);
  }

  const { onDenied } = http.options;
  // A response an earlier middleware already set (`c.finalized`) is left alone: counted, never touched.
  const act = verdictWriter<Context, Context, Next, Promise<Response | undefined>>(
    {
      proceed: (_c, _same, next) => next().then(nothing),
      stop: () => Promise.resolve(undefined),
      later: (_c, _same, _next, pending) => pending.then(responseOrNothing),
      setInfo: (c, _same, info) => c.set('rateLimit', info),
      sent: (c) => c.finalized,
      // On c.res, not c.header(): Hono merges these into a Response the handler returns itself, too.
      setHeaders: (c, _same, headers) => setHeaders(c.res.headers, headers),
      whenDone: (c, _same, next, onResponse) => reportingNext(c, next, onResponse),
      wait: (c, _same, ms) => waitUnlessGone(c, ms),
      // The client left while waiting: nothing is served (the status is for logs only).
      left: () => new Response(null, { status: 499 }),
      // Hono lays the headers already on `c.res` over the response returned: the denial's go there first, so
      // a response of your own keeps the headers it sets.
      onDenied:
        onDenied &&
        ((c, _same, denied) => {
          setHeaders(c.res.headers, denied.headers);
          return onDenied(c, denied);
        }),
      // Your Response, or what you set on `c.res`; none (or a throw): the default, as in Koa.
      answered: (c, _same, own, threw) => {
        if (threw) return undefined;
        if (own instanceof Response) return keepingHeaders(c.res.headers, own);
        return c.finalized ? c.res : undefined;
      },
      sendDenied: (c, _same, denied) => {
        setHeaders(c.res.headers, denied.headers);
        return c.json(denied.body, denied.status);
      },
    },
    http.report,
  );

  return Object.assign(sluiceRateLimit, { route: routeMiddleware, limiter: http.limiter });
}

const ALL_RULES: CheckScope = Object.freeze({});
const nothing = (): undefined => undefined;
const responseOrNothing = (value: unknown): Response | undefined =>
  value instanceof Response ? value : undefined;

function setHeaders(target: Headers, headers: Readonly<Record<string, string>>): void {
  for (const name in headers) target.set(name, headers[name] as string);
}

/** `own`, its headers left as they are when Hono merges `earlier` into it. */
function keepingHeaders(earlier: Headers, own: Response): Response {
  for (const name of own.headers.keys()) earlier.delete(name);
  return own;
}

/** The client: the connection's peer, or the forwarded hop `trustProxy` trusts to name it. */
function clientAddress(c: Context, trust: ForwardedTrust, getConnInfo: GetConnInfo): string | undefined {
  const forwardedFor = trust.trust === 'none' ? null : (c.req.header('x-forwarded-for') ?? null);
  return trust.clientAddress(peerAddress(c, getConnInfo), forwardedFor);
}

/** The connection's peer address; undefined where the runtime gives none (a request made in process). */
function peerAddress(c: Context, getConnInfo: GetConnInfo): string | undefined {
  try {
    return getConnInfo(c).remote.address;
  } catch {
    return undefined;
  }
}
