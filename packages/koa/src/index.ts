import {
  type CheckScope,
  createHttpLimiter,
  type DeniedResponse,
  type Limiter,
  type RateLimitOptions,
  type RequestFacts,
  type RuleSpec,
  releaseWhenDone,
  waitUnlessClosed,
} from '@sluice/core';
import type { Context, Middleware, Next } from 'koa';

/** Options of the Koa middleware: the shared adapter options (functions take the context) plus `onDenied`. */
export interface KoaRateLimitOptions extends RateLimitOptions<Context> {
  /** Sets your own denial on the context; the default is a JSON 429 (503 when a rule failed closed). */
  onDenied?: (ctx: Context, denied: DeniedResponse) => unknown;
}

/** The global middleware, with per-route middleware and the limiter behind both. */
export interface KoaRateLimit extends Middleware {
  /**
   * Middleware adding rules for one route (`router.get('/search', limiter.route({...rule}), handler)`),
   * compiled once here; the global rules, already checked by the global middleware, are not recounted.
   */
  route(rules: RuleSpec | readonly RuleSpec[]): Middleware;
  readonly limiter: Limiter;
}

/** Koa middleware: `app.use(rateLimit(options))`. Without options: 60 requests a minute per IP. */
export function rateLimit(options?: KoaRateLimitOptions): KoaRateLimit {
  const http = createHttpLimiter<Context, KoaRateLimitOptions>(options);

  const middleware = (scope: CheckScope): Middleware =>
    async function sluiceRateLimit(ctx: Context, next: Next): Promise<void> {
      const verdict = await http.check(ctx, facts(ctx), scope);
      if (verdict.action === 'skip') return next();
      if (verdict.action === 'deny') return deny(ctx, verdict.denied);
      ctx.set(verdict.headers);
      releaseWhenDone(ctx.res, verdict.release);
      if (verdict.delayMs > 0 && !(await waitUnlessClosed(ctx.res, verdict.delayMs))) {
        await verdict.cancel(); // the client left while waiting: serve nothing
        return;
      }
      return next();
    };

  async function deny(ctx: Context, denied: DeniedResponse): Promise<void> {
    if (http.options.onDenied) {
      try {
        await http.options.onDenied(ctx, denied);
        return;
      } catch (error) {
        http.report(error, 'on_denied');
      }
    }
    ctx.status = denied.status;
    ctx.set(denied.headers);
    ctx.body = denied.body;
  }

  return Object.assign(middleware({}), {
    route: (rules: RuleSpec | readonly RuleSpec[]) => middleware(http.routeScope(rules)),
    limiter: http.limiter,
  });
}

function facts(ctx: Context): RequestFacts {
  const matched: unknown = (ctx as { _matchedRoute?: unknown })._matchedRoute;
  return {
    ip: ctx.ip,
    method: ctx.method,
    url: ctx.originalUrl,
    ...(typeof matched === 'string' ? { route: matched } : {}),
    // Koa with app.proxy and no maxIpsCount takes the leftmost X-Forwarded-For entry, which the client writes.
    proxyTrust: !ctx.app.proxy ? 'none' : ctx.app.maxIpsCount > 0 ? 'bounded' : 'all',
    header: (name) => ctx.req.headers[name],
  };
}
