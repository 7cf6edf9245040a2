import type { Limiter } from '../engine/engine.js';
import { type ActualCosts, type Settlement, settledCost } from '../engine/settle.js';
import type { Decision } from '../observe/contract.js';
import type { SettleHandle } from './info.js';
import type { HeaderReader, Verdict } from './verdict.js';

/*
 * Reserve and settle over HTTP, for every adapter: a request admitted on an estimate (rules with `settle`)
 * gets `settle(actual)` and `used(units)` on its rate-limit info (`req.rateLimit`, `ctx.state.rateLimit`,
 * `c.get('rateLimit')`). When the response ends (or the client leaves), what was not settled yet is settled
 * from the response header named by the `settleHeader` option, else from the units reported with `used` (what
 * a stream produced); with neither, the estimate stands. The limiter settles a decision once: nothing is ever
 * charged twice.
 */

/** Still importable from here: it lives beside the info handlers read it on. */
export type { SettleHandle } from './info.js';

/** The limiter's part the HTTP layer settles through. */
export type SettleLimiter = Pick<Limiter, 'settle'>;

/** Whether the decision was admitted on an estimate: it holds a reservation. */
export function hasReservation(decision: Decision): boolean {
  // Indexed: a for-of here made an iterator on every request.
  const { leases } = decision;
  for (let i = 0; i < leases.length; i++) if (leases[i]!.reserved === true) return true;
  return false;
}

/** One request's settlement: the units reported so far, settled at most once. */
class Meter implements SettleHandle {
  #used = 0;
  #reported = false;

  constructor(
    private readonly decision: Decision,
    private readonly limiter: SettleLimiter,
  ) {}

  settle(actual: ActualCosts): Promise<Settlement> {
    return this.limiter.settle(this.decision, actual);
  }

  used(units: number): void {
    const cost = settledCost(units);
    if (cost === undefined) return;
    this.#used += cost;
    this.#reported = true;
  }

  /** At the response's end: the header's cost when it names one, else the units used, else nothing. */
  end(fromHeader: string | undefined): void {
    const stated = fromHeader === undefined || fromHeader === '' ? undefined : Number(fromHeader);
    if (stated !== undefined) void this.settle(stated);
    else if (this.#reported) void this.settle(this.#used);
  }
}

/**
 * The verdict with settling added when its decision holds a reservation: `settle` and `used` on its info, and
 * its response's end settling what was not settled yet. Any other verdict is returned as it is.
 */
export function withSettle(
  verdict: Verdict,
  limiter: SettleLimiter,
  settleHeader: string | undefined,
): Verdict {
  if (verdict.action !== 'allow' || !hasReservation(verdict.decision)) return verdict;
  const meter = new Meter(verdict.decision, limiter);
  const ended = verdict.onResponse;
  const info = { ...verdict.info, settle: meter.settle.bind(meter), used: meter.used.bind(meter) };
  return {
    ...verdict,
    info,
    onResponse(status, header?: HeaderReader) {
      meter.end(settleHeader === undefined ? undefined : header?.(settleHeader));
      ended?.(status, header);
    },
  };
}
