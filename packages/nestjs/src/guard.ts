import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { reportWhenDone, type Verdict, waitUnlessClosed } from '@sluice/core/http';
import type { RateLimitMetadata } from './decorators.js';
import { RateLimitException } from './exception.js';
import type { SluiceRequest } from './options.js';
import { rawResponse, requestFacts, setHeaders } from './platform.js';
import { SluiceService } from './service.js';
import { RATE_LIMIT_METADATA } from './tokens.js';

/**
 * Decides every HTTP request (registered as APP_GUARD by SluiceModule): global and route rules in one store
 * call, headers on the response, a denial thrown as {@link RateLimitException}. Other contexts (GraphQL,
 * microservices, WebSockets) pass untouched. A limiter failure lets the request through, never a 500.
 */
export class SluiceGuard implements CanActivate {
  readonly #sluice: SluiceService;
  readonly #reflector: Reflector;

  constructor(sluice: SluiceService, reflector: Reflector) {
    this.#sluice = sluice;
    this.#reflector = reflector;
  }

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
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
    const res = http.getResponse<object>();
    let verdict: Verdict | Promise<Verdict>;
    try {
      verdict = this.#sluice.http.check(req, requestFacts(req), scope);
    } catch (error) {
      // check() never throws; reading the request's facts might, on a platform this does not know.
      this.#sluice.http.report(error, 'check');
      return true;
    }
    if (!(verdict instanceof Promise)) return this.#act(req, res, verdict);
    return verdict.then((settled) => this.#act(req, res, settled));
  }

  /** Carries out a verdict: true to go on to the handler, or the denial thrown. */
  #act(req: SluiceRequest, res: object, verdict: Verdict): boolean | Promise<boolean> {
    if (verdict.action === 'skip') return true;
    req.rateLimit = verdict.info;
    if (verdict.action === 'deny') {
      setHeaders(res, verdict.denied.headers);
      throw new RateLimitException(verdict.denied);
    }
    setHeaders(res, verdict.headers);
    const raw = rawResponse(res);
    // How the response ends (leases, `count` refunds, adaptive rules); nothing to hear (the usual case): no listener.
    if (verdict.onResponse !== undefined) reportWhenDone(raw, verdict.onResponse);
    if (verdict.delayMs <= 0) return true;
    return waitUnlessClosed(raw, verdict.delayMs).then(async (stillThere) => {
      if (stillThere) return true;
      // The client left while waiting: serve nothing, give its queue place back.
      await verdict.cancel();
      return false;
    });
  }
}

Injectable()(SluiceGuard);
Inject(SluiceService)(SluiceGuard, undefined, 0);
Inject(Reflector)(SluiceGuard, undefined, 1);
