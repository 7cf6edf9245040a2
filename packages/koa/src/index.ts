import {
  createHttpLimiter,
  type DeniedResponse,
  nodeVerdictWriter,
  promiseStyle,
  type RateLimitInfo,
  type RateLimitMiddleware,
  type RateLimitOptions,
  routedMiddleware,
} from '@sluice/core/http';
import type { Context, Middleware, Next } from 'koa';
import { KoaFacts } from './facts.js';
import { routeOf } from './routes.js';

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

/** The global middleware (`app.use(limiter)`), with `limiter.route(...)` and the limiter behind both. */
export type KoaRateLimit = RateLimitMiddleware<Middleware>;

/** Koa middleware: `app.use(rateLimit(options))`. Without options: 60 requests a minute per IP. */
export function rateLimit(options?: KoaRateLimitOptions): KoaRateLimit {
  // Mounted with app.use, the middleware runs before @koa/router: it finds the template itself (routes.ts).
  const http = createHttpLimiter<Context, KoaRateLimitOptions>(options, { globalSeesPaths: true });
  const { onDenied } = http.options;
  // Koa's middleware gets the context alone: it stands for both the request and the response here.
  const act = nodeVerdictWriter<Context, Context, Next, Promise<void>>(
    {
      response: (ctx) => ctx.res,
      setInfo: (ctx, _same, info) => {
        ctx.state.rateLimit = info;
      },
      sent: (ctx) => ctx.res.headersSent,
      onDenied: onDenied && ((ctx, _same, denied) => onDenied(ctx, denied)),
      // What onDenied set stands, as in Express and Fastify; one that threw gets the default.
      answered: (ctx, _same, _own, threw) => (!threw && setResponse(ctx) ? ctx : undefined),
      sendDenied: (ctx, _same, denied) => {
        ctx.status = denied.status;
        ctx.set(denied.headers);
        ctx.body = denied.body;
      },
    },
    promiseStyle(),
    http.report,
  );
  return routedMiddleware<Context, Context, Next, Promise<void>, Middleware>(http, {
    routeOf: (ctx, _same, ours) => routeOf(ctx, ours),
    facts: (ctx, _same, template) => new KoaFacts(ctx, template),
    middleware: (run) => (ctx, next) => run(ctx, ctx, next),
    act,
  });
}

/** True once the context holds a response: a body, a status other than Koa's untouched 404, or bytes sent. */
function setResponse(ctx: Context): boolean {
  return ctx.body != null || ctx.status !== 404 || ctx.headerSent || ctx.respond === false;
}
