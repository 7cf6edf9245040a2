import type { Limiter, RuleSpec } from '@sluice/core';
import {
  type CheckScope,
  createHttpLimiter,
  type DeniedResponse,
  ExpressFacts,
  type InlineLimit,
  type RateLimitInfo,
  type RateLimitOptions,
  type RouteOptions,
  reportWhenDone,
  setHeaders,
  type Verdict,
  verdictWriter,
  waitUnlessClosed,
} from '@sluice/core/http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { type RouteMiddlewares, routeOf } from './routes.js';

declare global {
  namespace Express {
    interface Request {
      /** This request's limit as its RateLimit headers show it (set by @sluice/express). */
      rateLimit?: RateLimitInfo;
    }
  }
}

/** Options of the Express middleware: the shared adapter options plus an Express-typed `onDenied`. */
export interface ExpressRateLimitOptions extends RateLimitOptions<Request> {
  /** Sends your own denial; the default is a JSON 429 (503 when a rule failed closed). */
  onDenied?: (req: Request, res: Response, denied: DeniedResponse) => unknown;
}

/** The global middleware, with per-route middleware and the limiter behind both. */
export interface ExpressRateLimit extends RequestHandler {
  /**
   * Middleware adding rules for one route (`app.get('/search', limiter.route({...rule}), handler)`), or the
   * shorthand (`limiter.route({limit: 5, per: '1m'})`), compiled once here. The global middleware finds the
   * route a request goes to and checks its rules with the global ones, in one store call (all or nothing).
   * With `{afterBody: true}`, this middleware does (put it after the body parser): `cost(req)` reads `req.body`.
   */
  route(
    rules: RuleSpec | readonly RuleSpec[] | (InlineLimit & RouteOptions),
    options?: RouteOptions,
  ): RequestHandler;
  readonly limiter: Limiter;
}

const ALL_RULES: CheckScope = Object.freeze({});
const nothing = (): void => {};

/** Express middleware: `app.use(rateLimit(options))`. Without options: 60 requests a minute per IP. */
export function rateLimit(options?: ExpressRateLimitOptions): ExpressRateLimit {
  /** This limiter's route middleware, each with the scope the global middleware checks for its route. */
  const routeMiddlewares: RouteMiddlewares = new WeakMap();
  let routeLimited = false;

  // The global middleware runs before Express routes: it finds the template itself when it can (routes.ts).
  const http = createHttpLimiter<Request, ExpressRateLimitOptions>(options, {
    globalSeesPaths: true,
    // Without limiter.route(), the notes only keep a limiter mounted twice from counting twice: res.locals
    // holds them for a fraction of what a property added to the request costs. With route middleware they
    // stay on the request, which no middleware replaces (one may replace res.locals between two checks).
    notesOn: (req) => (routeLimited ? req : localsOf(req)),
  });

  // No async function: a request decided in process goes on to `next` without waiting on a promise.
  function sluiceRateLimit(req: Request, res: Response, next: NextFunction): void {
    // Only apps with limiter.route() or rules reading `route` look the route up.
    const route = routeLimited || http.readsRoute() ? routeOf(req, routeMiddlewares) : undefined;
    // A route decided after its body is parsed: its middleware checks the global rules too.
    if (route?.scope.afterBody === true) {
      next();
      return;
    }
    const verdict =
      route === undefined
        ? http.check(req, new ExpressFacts(req, undefined), ALL_RULES)
        : http.check(req, new ExpressFacts(req, route.template), route.scope);
    settle(req, res, next, verdict);
  }

  /** A route's middleware: its rules alone, unless the global middleware checked them already. */
  function routeMiddleware(
    rules: RuleSpec | readonly RuleSpec[] | (InlineLimit & RouteOptions),
    options?: RouteOptions,
  ): RequestHandler {
    const scope = http.routeScope(rules, options);
    const handler: RequestHandler = function sluiceRouteRateLimit(req, res, next) {
      settle(req, res, next, http.check(req, new ExpressFacts(req, undefined), scope));
    };
    routeMiddlewares.set(handler, { rules: scope.rules, afterBody: scope.afterBody });
    routeLimited = true;
    return handler;
  }

  function settle(
    req: Request,
    res: Response,
    next: NextFunction,
    verdict: Verdict | Promise<Verdict>,
  ): void {
    if (verdict instanceof Promise) verdict.then((settled) => act(req, res, next, settled)).catch(next);
    else act(req, res, next, verdict);
  }

  const act = verdictWriter<Request, Response, NextFunction, void>(
    {
      proceed: (_req, _res, next) => next(),
      stop: nothing,
      later: (_req, _res, next, pending) => void pending.catch(next),
      setInfo: (req, _res, info) => {
        req.rateLimit = info;
      },
      // Setting a header once the response is sent would throw ERR_HTTP_HEADERS_SENT.
      sent: (_req, res) => res.headersSent,
      // Node's own setHeader: Express's res.set adds charset handling for Content-Type, never set here.
      setHeaders: (_req, res, headers) => setHeaders(res, headers),
      whenDone: (_req, res, next, onResponse) => {
        reportWhenDone(res, onResponse);
        return next;
      },
      wait: (_req, res, ms) => waitUnlessClosed(res, ms),
      left: nothing,
      onDenied: http.options.onDenied,
      answered: (_req, res) => (res.headersSent ? res : undefined),
      sendDenied: (_req, res, denied) => res.status(denied.status).set(denied.headers).json(denied.body),
    },
    http.report,
  );

  return Object.assign(sluiceRateLimit, { route: routeMiddleware, limiter: http.limiter });
}

/** `res.locals`, Express's per-request dictionary, when it is an object; else the request itself. */
function localsOf(req: Request): object {
  const locals: unknown = req.res?.locals;
  return typeof locals === 'object' && locals !== null ? locals : req;
}
