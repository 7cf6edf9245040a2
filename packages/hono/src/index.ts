import { ServerResponse } from 'node:http';
import { getConnInfo as nodeConnInfo } from '@hono/node-server/conninfo';
import { ConfigError } from '@sluice/core';
import {
  createHttpLimiter,
  type DeniedResponse,
  FetchFacts,
  type ForwardedTrust,
  fetchVerdictWriter,
  forwardedTrust,
  type RateLimitInfo,
  type RateLimitMiddleware,
  type RateLimitOptions,
  routedMiddleware,
  type TrustProxy,
} from '@sluice/core/http';
import type { Context, MiddlewareHandler, Next } from 'hono';
import type { GetConnInfo } from 'hono/conninfo';
import { routePath } from 'hono/route';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { routeOf } from './routes.js';

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

/**
 * The global middleware (`app.use(limiter)`), with `limiter.route(...)` and the limiter behind both. Hono
 * matches every route before the first middleware runs: a route's rules are checked by the global middleware,
 * in the same call; with `{afterBody: true}` an async `cost(c)` may read `await c.req.json()`.
 */
export type HonoRateLimit = RateLimitMiddleware<MiddlewareHandler>;

/** Hono middleware: `app.use(rateLimit(options))`. Without options: 60 requests a minute per IP. */
export function rateLimit(options?: HonoRateLimitOptions): HonoRateLimit {
  const { trustProxy, getConnInfo = nodeConnInfo, ...shared } = options ?? {};
  const trust = forwardedTrust(trustProxy);
  if (typeof getConnInfo !== 'function')
    throw new ConfigError('invalid rate limit options: option "getConnInfo": must be a function');
  // Hono has matched the routes before the global middleware runs: it reads the template there (routes.ts).
  const http = createHttpLimiter<Context, HonoRateLimitOptions>(options && shared, { globalSeesPaths: true });
  const facts = (c: Context, route: string | undefined): FetchFacts =>
    new FetchFacts(c.req.raw, clientAddress(c, trust, getConnInfo), trust.trust, route);
  const act = fetchVerdictWriter<Context, Next>(
    {
      request: (c) => c.req.raw,
      response: (c) => c.res,
      sent: (c) => c.finalized,
      nodeResponse,
      setInfo: (c, info) => c.set('rateLimit', info),
      onDenied: http.options.onDenied,
      json: (c, body, status) => c.json(body, status as ContentfulStatusCode),
    },
    http.report,
  );
  return routedMiddleware<Context, Context, Next, Promise<Response | undefined>, MiddlewareHandler>(http, {
    routeOf: (c, _same, ours) => routeOf(c, ours),
    facts: (c, _same, template) => facts(c, template),
    routeFacts: (c) => facts(c, routePath(c)),
    middleware: (run) => (c, next) => run(c, c, next),
    act,
  });
}

/** The Node response under a context served by @hono/node-server; undefined on other runtimes. */
function nodeResponse(c: Context): ServerResponse | undefined {
  const env = c.env as { server?: { outgoing?: unknown }; outgoing?: unknown } | undefined;
  const outgoing = env?.server?.outgoing ?? env?.outgoing;
  return outgoing instanceof ServerResponse ? outgoing : undefined;
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
