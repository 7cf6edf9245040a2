import type { ActualCosts, Settlement } from '../engine/settle.js';
import type { Decision, RuleResult } from '../observe/contract.js';

/**
 * What a handler reads of its request's limit (`req.rateLimit`, `request.rateLimit`,
 * `ctx.state.rateLimit`, as each adapter puts it): the numbers the RateLimit headers show.
 */
export interface RateLimitInfo {
  /** The rule shown: the denying one, or the most constrained; undefined when no rule applied. */
  readonly rule: string | undefined;
  /** Its limit (Infinity when no rule applied). */
  readonly limit: number;
  /** Requests (units) left in it now (Infinity when no rule applied). */
  readonly remaining: number;
  /** Milliseconds until it has room again (its window resets, its bucket refills). */
  readonly resetMs: number;
  /** The whole decision: every rule's result, shadow denials, whether the store failed. */
  readonly decision: Decision;
  /** Reserve and settle (rules with `settle`): reports the request's actual cost, once (see http/settle.ts). */
  readonly settle?: SettleHandle['settle'];
  /** Reserve and settle: adds units a stream produced, settled when it ends or its client leaves. */
  readonly used?: SettleHandle['used'];
}

/** The info of a decision; `shown` is the rule an allowed response's headers show. */
export function rateLimitInfo(decision: Decision, shown: RuleResult | undefined): RateLimitInfo {
  if (!decision.allowed || shown === undefined) {
    const { rule, limit, remaining, resetMs } = decision;
    return { rule, limit, remaining, resetMs, decision };
  }
  const { rule, limit, remaining, resetMs } = shown;
  return { rule, limit, remaining, resetMs, decision };
}

/** What handlers call, on the request's rate-limit info, for a request admitted on an estimate. */
export interface SettleHandle {
  /** Reports the request's actual cost (one number, or per rule name); settled once, at once. Never rejects. */
  settle(actual: ActualCosts): Promise<Settlement>;
  /**
   * Adds units produced so far (a stream's tokens or bytes): settled when the response ends or the client
   * leaves, unless `settle` came first. A value that is not a finite number >= 0 is ignored.
   */
  used(units: number): void;
}
