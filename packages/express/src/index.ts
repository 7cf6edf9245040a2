import {
  callbackStyle,
  createHttpLimiter,
  type DeniedResponse,
  nodeVerdictWriter,
  type RateLimitInfo,
  type RateLimitMiddleware,
  type RateLimitOptions,
  routedMiddleware,
} from '@sluice/core/http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ExpressFacts } from './facts.js';
import { routeOf } from './routes.js';

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

/** The global middleware (`app.use(limiter)`), with `limiter.route(...)` and the limiter behind both. */
export type ExpressRateLimit = RateLimitMiddleware<RequestHandler>;

/** Express middleware: `app.use(rateLimit(options))`. Without options: 60 requests a minute per IP. */
export function rateLimit(options?: ExpressRateLimitOptions): ExpressRateLimit {
  let routeLimited = false;
  // The global middleware runs before Express routes: it finds the template itself when it can (routes.ts).
  const http = createHttpLimiter<Request, ExpressRateLimitOptions>(options, {
    globalSeesPaths: true,
    // Without limiter.route(), the notes only keep a limiter mounted twice from counting twice: res.locals
    // holds them for a fraction of what a property added to the request costs. With route middleware they
    // stay on the request, which no middleware replaces (one may replace res.locals between two checks).
    notesOn: (req) => (routeLimited ? req : localsOf(req)),
  });
  const act = nodeVerdictWriter<Request, Response, NextFunction, void>(
    {
      response: (_req, res) => res,
      setInfo: (req, _res, info) => {
        req.rateLimit = info;
      },
      onDenied: http.options.onDenied,
      sendDenied: (_req, res, denied) => res.status(denied.status).set(denied.headers).json(denied.body),
    },
    callbackStyle(),
    http.report,
  );
  return routedMiddleware<Request, Response, NextFunction, void, RequestHandler>(http, {
    routeOf: (req, _res, ours) => routeOf(req, ours),
    facts: (req, _res, template) => new ExpressFacts(req, template),
    middleware: (run) => run,
    act,
    onRouteLimited: () => {
      routeLimited = true;
    },
  });
}

/** `res.locals`, Express's per-request dictionary, when it is an object; else the request itself. */
function localsOf(req: Request): object {
  const locals: unknown = req.res?.locals;
  return typeof locals === 'object' && locals !== null ? locals : req;
}
