import type { Check, CheckResult } from '../store/contract.js';
import type { StoreOutcome } from './decision.js';
import type { PlannedCheck } from './plan.js';

/** Units a gateway took from the store in one batch and spends locally until the pool expires. */
interface Pool {
  units: number;
  readonly expiresAt: number;
  readonly takenAt: number;
  readonly limit: number;
  /** What the store had left right after the batch was taken. */
  readonly storeRemaining: number;
  readonly resetMs: number;
}

/** What one request did with local leases: checks served from pools, checks sent with batch costs. */
export interface LeasePlan {
  /** Checks to send to the store (leased ones with their batch cost), in order. */
  readonly send: PlannedCheck[];
  /** Position in `send` of each planned check, or -1 when a pool served it. */
  readonly sentAt: number[];
  /** Results of the checks pools served, by planned position. */
  readonly served: (CheckResult | undefined)[];
  /** Units this request took out of pools (given back if the request is denied). */
  readonly spent: { pool: Pool; cost: number }[];
}

/** Default bound on pools kept (one per leased rule and counter). */
const MAX_POOLS = 10_000;

function poolKey(check: Check): string {
  return `${check.rule}\u0000${check.tag}`;
}

/**
 * Local leases (`lease: {batch: K}`): a gateway takes K units at once from the store and spends them in
 * process, so a hot rule costs one store call per K requests. Taken units are counted in the store when
 * taken; a pool lives one window (or until the counter's reset for calendar quotas), so what a gateway
 * spends beyond the store's view is bounded by K per window. Near the limit a batch that no longer fits is
 * refused even where the request alone would fit: up to K units per gateway go unused, never over-spent.
 */
export class LocalLeases {
  readonly #pools = new Map<string, Pool>();

  /** Splits the planned checks; undefined (the usual case) when no rule of the request has a lease. */
  take(planned: readonly PlannedCheck[], now: number): LeasePlan | undefined {
    let any = false;
    for (const p of planned) if (p.rule.lease !== undefined) any = true;
    if (!any) return undefined;
    const plan: LeasePlan = { send: [], sentAt: [], served: [], spent: [] };
    for (const p of planned) {
      const batch = p.rule.lease?.batch;
      if (batch === undefined) {
        plan.sentAt.push(plan.send.push(p) - 1);
        plan.served.push(undefined);
        continue;
      }
      const pool = this.#pools.get(poolKey(p.check));
      if (pool !== undefined && pool.expiresAt > now && pool.units >= p.check.cost) {
        pool.units -= p.check.cost;
        plan.spent.push({ pool, cost: p.check.cost });
        plan.sentAt.push(-1);
        plan.served.push(servedResult(pool, now));
        continue;
      }
      const cost = Math.max(p.check.cost, batch);
      plan.sentAt.push(plan.send.push({ rule: p.rule, check: { ...p.check, cost } }) - 1);
      plan.served.push(undefined);
    }
    return plan;
  }

  /**
   * The store's answer for `plan.send` turned into an outcome for every planned check; batches the store
   * committed fill their pools. A failed store call fails every check (pool units spent are given back).
   */
  settle(
    planned: readonly PlannedCheck[],
    plan: LeasePlan,
    outcome: StoreOutcome,
    now: number,
  ): StoreOutcome {
    if (!outcome.ok) {
      this.refund(plan);
      return outcome;
    }
    let committed = true;
    plan.send.forEach((p, i) => {
      if (p.check.mode === 'enforce' && !outcome.results[i]?.allowed) committed = false;
    });
    const results: CheckResult[] = [];
    planned.forEach((p, i) => {
      const served = plan.served[i];
      if (served !== undefined) {
        results.push(served);
        return;
      }
      const sent = plan.send[plan.sentAt[i]!]!;
      const result = outcome.results[plan.sentAt[i]!]!;
      const extra = sent.check.cost - p.check.cost;
      if (extra === 0 || !committed || !result.allowed) {
        results.push(result);
        return;
      }
      const pool = this.#fill(p, result, extra, now);
      // Should the request be denied after all (by a local-scope rule), its own units go to the pool.
      plan.spent.push({ pool, cost: p.check.cost });
      results.push({ ...result, remaining: result.remaining + extra });
    });
    return { ok: true, results };
  }

  /** Gives back the units a denied request took out of pools. */
  refund(plan: LeasePlan): void {
    for (const { pool, cost } of plan.spent) pool.units += cost;
    plan.spent.length = 0;
  }

  #fill(p: PlannedCheck, result: CheckResult, units: number, now: number): Pool {
    const lifetime = p.check.params.windowMs > 0 ? p.check.params.windowMs : result.resetMs;
    const pool: Pool = {
      units,
      expiresAt: now + lifetime,
      takenAt: now,
      limit: result.limit,
      storeRemaining: result.remaining,
      resetMs: result.resetMs,
    };
    const key = poolKey(p.check);
    const pools = this.#pools;
    const old = pools.get(key);
    // Units left in a live pool are already counted in the store: keep them.
    if (old !== undefined && old.expiresAt > now) pool.units += old.units;
    pools.delete(key);
    if (pools.size >= MAX_POOLS) pools.delete(pools.keys().next().value as string);
    pools.set(key, pool);
    return pool;
  }
}

function servedResult(pool: Pool, now: number): CheckResult {
  return {
    allowed: true,
    limit: pool.limit,
    remaining: pool.storeRemaining + pool.units,
    resetMs: Math.max(0, pool.resetMs - (now - pool.takenAt)),
    retryAfterMs: 0,
  };
}
