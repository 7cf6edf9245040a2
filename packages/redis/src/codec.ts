import {
  type Check,
  type CheckResult,
  ConfigError,
  holderName,
  isKeyPrefix,
  KEY_PREFIX_RULE,
  type Lease,
  type LimitParams,
} from '@sluice/core/store';
import { luaAlgorithms, type RefundCheck } from './algorithms/index.js';
import { OWE_POLICY } from './policy.js';
import { slotOfTag } from './slot.js';

/*
 * The script codec beside scriptCall.ts (evaluation calls): what is checked before a call, how a call is
 * split by slot, the release and refund calls, and how their errors read. Pure: no client, no I/O.
 */

const SAFE_TAG = /^[A-Za-z0-9_-]{1,128}$/;
const SAFE_RULE = /^[A-Za-z0-9_.-]{1,128}$/;

/** Refuses a key prefix that could break the key format (braces would move the Cluster hash tag). */
export function assertPrefix(prefix: string): string {
  if (!isKeyPrefix(prefix)) throw new ConfigError(`prefix ${KEY_PREFIX_RULE}`);
  return prefix;
}

/** Refuses a rule or tag that cannot go in a key as is. */
export function assertSafeId(id: { rule: string; tag: string }): void {
  if (!SAFE_TAG.test(id.tag))
    throw new ConfigError('check tag must be a hash (base64url), as tagFor() makes');
  if (!SAFE_RULE.test(id.rule))
    throw new ConfigError(`rule name not usable in a key: ${JSON.stringify(id.rule)}`);
}

/**
 * Refuses a check the script could not run: a bad key part, numbers it could not read, an unknown
 * algorithm. Checked before the check joins a coalesced call: a Lua error would fail every request of
 * that call, not only the bad one.
 */
export function assertCheck(check: Check): void {
  assertSafeId(check);
  const { limit, windowMs, burst } = check.params;
  if (![limit, windowMs, burst, check.cost].every(Number.isFinite)) {
    throw new ConfigError(
      `check of rule ${JSON.stringify(check.rule)} has a limit, window, burst or cost that is not a number`,
    );
  }
  if (luaAlgorithms[check.algorithm] === undefined) {
    throw new ConfigError(`unknown algorithm ${JSON.stringify(check.algorithm)}`);
  }
  if (check.policy !== undefined) assertPolicy(check);
}

/** Refuses a policy the script could not read: numbers that are not, an idempotency id that is no hash. */
function assertPolicy(check: Check): void {
  const { ban, penalty, idempotentMs } = check.policy!;
  const numbers = [penalty ?? 0, idempotentMs ?? 0];
  if (ban !== undefined) numbers.push(ban.after, ban.withinMs, ban.forMs, ...(ban.escalateMs ?? []));
  if (!numbers.every((n) => Number.isFinite(n) && n >= 0))
    throw new ConfigError(
      `check of rule ${JSON.stringify(check.rule)} has a ban, penalty or idempotent that is not a number`,
    );
  if (check.idempotencyId !== undefined && !SAFE_TAG.test(check.idempotencyId))
    throw new ConfigError('check idempotency id must be a hash (base64url), as the limiter makes it');
}

/** Groups items by the Cluster slot of their tag, keeping their positions. */
export function bySlot<T extends { tag: string }>(items: readonly T[]): number[][] {
  const groups = new Map<number, number[]>();
  items.forEach((item, index) => {
    const slot = slotOfTag(item.tag);
    const group = groups.get(slot);
    if (group === undefined) groups.set(slot, [index]);
    else group.push(index);
  });
  return [...groups.values()];
}

/** Every item in one group (one server), or one group per slot (Cluster). */
export function groupsFor<T extends { tag: string }>(items: readonly T[], cluster: boolean): number[][] {
  return cluster ? bySlot(items) : [items.map((_, i) => i)];
}

/**
 * Slot groups commit independently. When an enforcing check denies in one group (or a group failed, and
 * with it the request), leases taken in groups that committed would be held until they expire although
 * the request is refused: these are the leases to give back. (Counters of other algorithms in those
 * groups keep the denied request's cost; the README says so.)
 */
export function strandedLeases(
  checks: readonly Check[],
  groups: readonly number[][],
  results: readonly (CheckResult | undefined)[],
  failed: boolean,
): Lease[] {
  const unanswered = (indexes: number[]) => results[indexes[0]!] === undefined;
  const deniedIn = (indexes: number[]) =>
    indexes.some((i) => checks[i]!.mode === 'enforce' && results[i]?.allowed === false);
  if (!failed && !groups.some(deniedIn)) return [];
  const stranded: Lease[] = [];
  for (const indexes of groups) {
    if (unanswered(indexes) || deniedIn(indexes)) continue;
    for (const i of indexes) {
      const { rule, tag, algorithm, leaseId } = checks[i]!;
      if (leaseId !== undefined && results[i]!.allowed)
        stranded.push({ rule, tag, algorithm, id: leaseId, scope: 'store' });
    }
  }
  return stranded;
}

/** Renewal specs' params by lease duration: one object per duration, so a call's specs go once each. */
const renewParams = new Map<number, LimitParams>();

/**
 * Held concurrency leases as checks of the renewal fragment (renewFragment), one call per Cluster slot for
 * all of a process's live leases; refunds and leases without a duration are left out.
 */
export function renewChecks(leases: readonly Lease[]): Check[] {
  const checks: Check[] = [];
  for (const lease of leases) {
    const { rule, tag, leaseMs } = lease;
    if (lease.refund !== undefined || leaseMs === undefined || lease.algorithm !== 'concurrency') continue;
    let params = renewParams.get(leaseMs);
    if (params === undefined) {
      params = Object.freeze({ limit: 0, windowMs: leaseMs, burst: 0 });
      renewParams.set(leaseMs, params);
    }
    checks.push({ rule, tag, algorithm: 'concurrency', params, cost: 0, mode: 'shadow', leaseId: lease.id });
  }
  return checks;
}

/** The params of a lease release's spec: a release reads no limit (one spec serves every release of a call). */
const RELEASE_PARAMS: LimitParams = Object.freeze({ limit: 0, windowMs: 0, burst: 0 });

/**
 * What a response gives back, as checks of each algorithm's give-back fragment (see giveBackFragmentOf), so that
 * they all go in one script call (per Cluster slot): concurrency leases dropped by id, and units refunded
 * (charges a rule's `count` does not keep, leaky_bucket places never served), each carrying its charge; the
 * algorithm holding each is core's `holderName` (its one fallback for a lease that names none).
 */
export function giveBackChecks(leases: readonly Lease[]): Check[] {
  return leases.map((lease): Check | RefundCheck => {
    const { rule, tag, refund, owed } = lease;
    // A settle above the estimate: the rule's own algorithm, charging whatever the limit (OWE_POLICY).
    if (owed !== undefined) {
      const algorithm = holderName(lease);
      return {
        rule,
        tag,
        algorithm,
        params: owed.params,
        cost: owed.cost,
        mode: 'shadow',
        policy: OWE_POLICY,
      };
    }
    if (refund === undefined) {
      const algorithm = holderName(lease);
      return { rule, tag, algorithm, params: RELEASE_PARAMS, cost: 0, mode: 'shadow', leaseId: lease.id };
    }
    const algorithm = holderName(lease);
    return { rule, tag, algorithm, params: refund.params, cost: refund.cost, mode: 'shadow', charge: refund };
  });
}
