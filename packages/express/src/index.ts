import {
  type CheckScope,
  createHttpLimiter,
  type DeniedResponse,
  type Limiter,
  type ProxyTrust,
  type RateLimitOptions,
  type RequestFacts,
  type RuleSpec,
  releaseWhenDone,
  waitUnlessClosed,
} from '@sluice/core';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/** Options of the Express middleware: the shared adapter options plus an Express-typed `onDenied`. */
export interface ExpressRateLimitOptions extends RateLimitOptions<Request> {
  /** Sends your own denial; the default is a JSON 429 (503 when a rule failed closed). */
  onDenied?: (req: Request, res: Response, denied: DeniedResponse) => unknown;
}

/** The global middleware, with per-route middleware and the limiter behind both. */
export interface ExpressRateLimit extends RequestHandler {
  /**
   * Middleware adding rules for one route (`app.get('/search', limiter.route({...rule}), handler)`),
   * compiled once here; the global rules, already checked by the global middleware, are not recounted.
   */
  route(rules: RuleSpec | readonly RuleSpec[]): RequestHandler;
  readonly limiter: Limiter;
}

/** Express middleware: `app.use(rateLimit(options))`. Without options: 60 requests a minute per IP. */
export function rateLimit(options?: ExpressRateLimitOptions): ExpressRateLimit {
  const http = createHttpLimiter<Request, ExpressRateLimitOptions>(options);

  const middleware = (scope: CheckScope): RequestHandler =>
    function sluiceRateLimit(req, res, next) {
      handle(req, res, next, scope).catch(next);
    };

  async function handle(req: Request, res: Response, next: NextFunction, scope: CheckScope): Promise<void> {
    const verdict = await http.check(req, new ExpressFacts(req), scope);
    if (verdict.action === 'skip') return next();
    if (verdict.action === 'deny') return deny(req, res, verdict.denied);
    res.set(verdict.headers);
    // Leases to hand back when the response ends; none (the usual case): no listeners.
    if (verdict.decision.leases.length > 0) releaseWhenDone(res, verdict.release);
    if (verdict.delayMs > 0 && !(await waitUnlessClosed(res, verdict.delayMs))) {
      await verdict.cancel(); // the client left while waiting: serve nothing
      return;
    }
    next();
  }

  async function deny(req: Request, res: Response, denied: DeniedResponse): Promise<void> {
    if (http.options.onDenied) {
      try {
        await http.options.onDenied(req, res, denied);
      } catch (error) {
        http.report(error, 'on_denied');
      }
      if (res.headersSent) return;
    }
    res.status(denied.status).set(denied.headers).json(denied.body);
  }

  return Object.assign(middleware({}), {
    route: (rules: RuleSpec | readonly RuleSpec[]) => middleware(http.routeScope(rules)),
    limiter: http.limiter,
  });
}

/** What the limiter reads off an Express request; a class, so no closure is made per request. */
class ExpressFacts implements RequestFacts {
  readonly ip: string | undefined;
  readonly method: string;
  readonly url: string;
  readonly route: string | undefined;
  readonly caseSensitive: boolean;
  readonly proxyTrust: ProxyTrust;
  readonly #headers: Request['headers'];

  constructor(req: Request) {
    this.ip = req.ip ?? req.socket.remoteAddress;
    this.method = req.method;
    this.url = req.originalUrl;
    this.route = typeof req.route?.path === 'string' ? `${req.baseUrl}${req.route.path}` : undefined;
    this.caseSensitive = req.app.enabled('case sensitive routing');
    this.proxyTrust = proxyTrust(req.app.get('trust proxy'));
    this.#headers = req.headers;
  }

  header(name: string): string | readonly string[] | undefined {
    return this.#headers[name];
  }
}

/** Express's 'trust proxy' setting: false by default, true trusts every hop, anything else is bounded. */
function proxyTrust(setting: unknown): ProxyTrust {
  if (setting === true) return 'all';
  return setting === false || setting === undefined ? 'none' : 'bounded';
}
