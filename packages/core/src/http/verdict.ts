import type { Limiter } from '../engine/engine.js';
import type { HeaderFormat } from '../fields/responses.js';
import {
  type DeniedResponse,
  DRAFT_NAMES,
  deniedResponse,
  type HeaderNames,
  type HeaderValues,
  rateLimitHeaders,
} from '../fields/responses.js';
import type { Decision, RuleResult } from '../observe/contract.js';
import type { AdapterReport } from './hooks.js';
import { type RateLimitInfo, rateLimitInfo } from './info.js';

/** What the adapter must do with a request. */
export type Verdict =
  | { readonly action: 'skip' }
  | {
      readonly action: 'allow';
      readonly decision: Decision;
      readonly headers: HeaderValues;
      /** For handlers: `req.rateLimit`, `request.rateLimit`, `ctx.state.rateLimit`, by adapter. */
      readonly info: RateLimitInfo;
      /** leaky_bucket: wait this long before passing the request on. */
      readonly delayMs: number;
      /**
       * Set when the decision needs to hear how its response ends (leases to release, `count` charges to
       * refund, adaptive rules to feed): the adapter calls it once, with the final status, or with undefined
       * when the client left before a response. Undefined otherwise: the adapter adds no listener.
       */
      readonly onResponse: ResponseListener | undefined;
      /** Gives back the decision's leases (not its `count` charges: no status); idempotent, never rejects. */
      release(): Promise<void>;
      /** The request will not be served (the client left while it waited): also gives its queue place back. */
      cancel(): Promise<void>;
    }
  | { readonly action: 'deny'; readonly denied: DeniedResponse; readonly info: RateLimitInfo };

/**
 * How a response ended, reported once by the adapter: its status, or undefined when the client left before a
 * response (aborted: `count` charges stay). Never throws; failures behind it are reported, not thrown.
 */
export type ResponseListener = (status: number | undefined, header?: HeaderReader) => void;

/** Reads a header of the response as it ended (reserve and settle's `settleHeader`). */
export type HeaderReader = (name: string) => string | undefined;

/** What a verdict asks of the limiter when the response ends. */
export type OutcomeLimiter = Pick<Limiter, 'release' | 'cancel'> & Partial<Pick<Limiter, 'observe' | 'hold'>>;

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
 * The verdict of an allowed decision, its headers showing `shown`. When the decision holds something or has
 * adaptive rules, `onResponse` hands the response's end to the limiter once: leases released and `count`
 * charges refunded by status (`limiter.release`), status and latency (ms from the decision, its leaky_bucket
 * delay left out, by `clock`) to the adaptive rules (`limiter.observe`). `release` gives its leases back
 * once, `cancel` its queue place too; failures reported, never thrown.
 */
export function allowVerdict(
  decision: Decision,
  shown: RuleResult | undefined,
  format: HeaderFormat,
  clock: () => number,
  limiter: OutcomeLimiter,
  report: AdapterReport,
  names: HeaderNames = DRAFT_NAMES,
): Verdict {
  const headers = rateLimitHeaders(decision, format, shown, clock, names);
  const info = rateLimitInfo(decision, shown);
  const holds = decision.leases.length > 0;
  // Nothing to hand back or observe (the usual case): no closures, and no listener in the adapter.
  if (!holds && decision.adaptive === undefined) {
    return {
      action: 'allow',
      decision,
      headers,
      info,
      delayMs: decision.delayMs,
      onResponse: undefined,
      release: NOTHING,
      cancel: NOTHING,
    };
  }
  // Its leases live as long as the response does (a stream): renewed until its end releases them.
  if (holds) limiter.hold?.(decision);
  let released: Promise<void> | undefined;
  const giveBack = (status: number | undefined): Promise<void> => {
    released ??= limiter.release(decision, status).catch((error: unknown) => report(error, 'release'));
    return released;
  };
  const served = clock() + decision.delayMs;
  let ended = false;
  return {
    action: 'allow',
    decision,
    headers,
    info,
    delayMs: decision.delayMs,
    onResponse(status) {
      if (ended) return;
      ended = true;
      if (holds) void giveBack(status);
      if (status === undefined || decision.adaptive === undefined) return;
      try {
        limiter.observe?.(decision, status, Math.max(0, clock() - served));
      } catch (error) {
        report(error, 'release');
      }
    },
    release: () => giveBack(undefined),
    cancel() {
      return limiter.cancel(decision).catch((error: unknown) => report(error, 'release'));
    },
  };
}
