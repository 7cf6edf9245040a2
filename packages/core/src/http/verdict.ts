import type { Limiter } from '../engine.js';
import type { Decision, RuleResult } from '../types.js';
import type { AdapterReport } from './hooks.js';
import { type RateLimitInfo, rateLimitInfo } from './info.js';
import type { HeaderFormat } from './responses.js';
import { type DeniedResponse, deniedResponse, type HeaderValues, rateLimitHeaders } from './responses.js';

/** What the adapter must do with a request. */
export type Verdict =
  | { readonly action: 'skip' }
  | {
      readonly action: 'allow';
      readonly decision: Decision;
      readonly headers: HeaderValues;
      /** For handlers: `req.rateLimit` (Express), `request.rateLimit` (Fastify), `ctx.state.rateLimit` (Koa). */
      readonly info: RateLimitInfo;
      /** leaky_bucket: wait this long before passing the request on. */
      readonly delayMs: number;
      /** Gives back the decision's leases when the response ends; idempotent, never rejects. */
      release(): Promise<void>;
      /** The request will not be served (the client left while it waited): also gives its queue place back. */
      cancel(): Promise<void>;
    }
  | { readonly action: 'deny'; readonly denied: DeniedResponse; readonly info: RateLimitInfo };

const NOTHING = (): Promise<void> => Promise.resolve();

/** The verdict of a denied decision: the response to send (`jitter`: the denying rule's `retry_jitter`). */
export function denyVerdict(
  decision: Decision,
  format: HeaderFormat,
  clock: () => number,
  jitter = 0,
): Verdict {
  const denied = deniedResponse(decision, format, clock, jitter);
  return { action: 'deny', denied, info: rateLimitInfo(decision, undefined) };
}

/**
 * The verdict of an allowed decision, its headers showing `shown`; `release` gives its leases back once,
 * `cancel` its queue place too, failures reported, never thrown.
 */
export function allowVerdict(
  decision: Decision,
  shown: RuleResult | undefined,
  format: HeaderFormat,
  clock: () => number,
  limiter: Pick<Limiter, 'release' | 'cancel'>,
  report: AdapterReport,
): Verdict {
  const headers = rateLimitHeaders(decision, format, shown, clock);
  const info = rateLimitInfo(decision, shown);
  // Nothing to hand back: share no-op functions instead of making two closures per request.
  if (decision.leases.length === 0) {
    return {
      action: 'allow',
      decision,
      headers,
      info,
      delayMs: decision.delayMs,
      release: NOTHING,
      cancel: NOTHING,
    };
  }
  let released: Promise<void> | undefined;
  return {
    action: 'allow',
    decision,
    headers,
    info,
    delayMs: decision.delayMs,
    release() {
      released ??= limiter.release(decision).catch((error: unknown) => report(error, 'release'));
      return released;
    },
    cancel() {
      return limiter.cancel(decision).catch((error: unknown) => report(error, 'release'));
    },
  };
}
