import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  type DeniedResponse,
  type MiddlewareStyle,
  nodeVerdictWriter,
  sendChallengePage,
  type Verdict,
  type VerdictWriter,
} from '@sluice/core/http';
import type { RateLimitMetadata } from './decorators.js';
import { RateLimitException } from './exception.js';
import type { SluiceRequest } from './options.js';
import { rawResponse, requestFacts, setHeaders } from './platform.js';
import { SluiceService } from './service.js';
import { RATE_LIMIT_METADATA } from './tokens.js';

type Activation = boolean | Promise<boolean>;

/** A denial, thrown for Nest's exception filters, its headers set. */
function throwDenial(_req: SluiceRequest, res: object, denied: DeniedResponse): never {
  setHeaders(res, denied.headers);
  throw new RateLimitException(denied);
}

/** A challenge page (a browser at the challenge stage): sent here, then thrown, so filters still hear of it. */
function sendPageAndThrow(_req: SluiceRequest, res: object, denied: DeniedResponse): never {
  sendChallengePage(rawResponse(res), denied);
  throw new RateLimitException(denied);
}

/** A guard goes on by returning true; what it waits for, it returns (a denial rejects it). */
const GUARD_STYLE: MiddlewareStyle<SluiceRequest, object, undefined, Activation> = {
  proceed: () => true,
  stop: () => true,
  later: (_req, _res, _next, pending) => pending as Promise<boolean>,
};

/**
 * Decides every HTTP request (registered as APP_GUARD by SluiceModule): global and route rules in one store
 * call, headers on the response, a denial thrown as {@link RateLimitException}. Other contexts (GraphQL,
 * microservices, WebSockets) pass untouched. A limiter failure lets the request through, never a 500.
 */
export class SluiceGuard implements CanActivate {
  readonly #sluice: SluiceService;
  readonly #reflector: Reflector;
  /** The shared writer: headers, the response's end, a leaky_bucket wait; a denial, Nest's exception filters'. */
  readonly #act: VerdictWriter<SluiceRequest, object, undefined, Activation>;

  constructor(sluice: SluiceService, reflector: Reflector) {
    this.#sluice = sluice;
    this.#reflector = reflector;
    this.#act = nodeVerdictWriter<SluiceRequest, object, undefined, Activation>(
      {
        response: (_req, res) => rawResponse(res),
        setInfo: (req, _res, info) => {
          req.rateLimit = info;
        },
        // Headers are set unless sent (setHeaders checks); a denial is thrown even so.
        sent: () => false,
        setHeaders: (_req, res, headers) => setHeaders(res, headers),
        // The client left while waiting: serve nothing (its queue place was given back).
        left: () => false,
        onDenied: undefined,
        sendDenied: throwDenial,
        sendPage: sendPageAndThrow,
      },
      GUARD_STYLE,
      sluice.http.report,
    );
  }

  canActivate(context: ExecutionContext): Activation {
    if (context.getType() !== 'http') return true;
    const handler = context.getHandler();
    const controller = context.getClass();
    const config = this.#reflector.getAllAndOverride<RateLimitMetadata | undefined>(RATE_LIMIT_METADATA, [
      handler,
      controller,
    ]);
    const scope = this.#sluice.scopeOf(config, controller.name, handler.name);
    if (scope === undefined) return true;
    const http = context.switchToHttp();
    const req = http.getRequest<SluiceRequest>();
    let verdict: Verdict | Promise<Verdict>;
    try {
      verdict = this.#sluice.http.check(req, requestFacts(req), scope);
    } catch (error) {
      // check() never throws; reading the request's facts might, on a platform this does not know.
      this.#sluice.http.report(error, 'check');
      return true;
    }
    return this.#act(req, http.getResponse<object>(), undefined, verdict);
  }
}

Injectable()(SluiceGuard);
Inject(SluiceService)(SluiceGuard, undefined, 0);
Inject(Reflector)(SluiceGuard, undefined, 1);
