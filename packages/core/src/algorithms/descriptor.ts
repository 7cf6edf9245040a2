import type { Charge } from './charge.js';
import type { LimitParams, Outcome } from './limits.js';

/** How a rule writes an algorithm's limit: `{requests, per, burst?}` or `{concurrent, lease?}`. */
export type LimitForm = 'requests' | 'concurrent';

/**
 * What a request's hold looks like when its response ends: nothing, a lease to drop, or units to give back
 * (a queue place never served, a charge the rule's `count` does not keep).
 */
export type ReleaseKind = 'none' | 'lease' | 'refund';

/** Everything about an algorithm but how its holds go back. */
interface AlgorithmCore<N extends string, S, P extends LimitParams> {
  /** The name rules give in `algorithm:`. */
  readonly name: N;
  /** Which limit form a rule of this algorithm writes. */
  readonly limit: LimitForm;
  /** Whether `limit.burst` applies (a capacity beyond the rate). */
  readonly burst: boolean;
  /** Whether `per` may be a calendar period (day, week, month). */
  readonly calendar: boolean;
  /** Whether a gateway may take units in a batch and spend them later (`lease: {batch}`). */
  readonly leasable: boolean;
  /**
   * Whether a value read back from a store is this algorithm's state; stores decide on any other value as on
   * none (decideByName), so it must reject every value `decide` cannot read without throwing.
   */
  isState(value: unknown): value is S;
  /** The pure decision over explicit state and time. No clock, no I/O. */
  decide(state: S | undefined, now: number, params: P, cost: number): Outcome<S>;
}

/** Holds nothing past the decision. */
interface NoRelease {
  readonly release: 'none';
}

/** Holds a lease named by the request until its response ends (or the lease expires). */
interface LeaseRelease<S, P extends LimitParams> {
  readonly release: 'lease';
  /** The params `decide` takes for the request holding lease `id`. */
  withLease(params: LimitParams, id: string): P;
  /** The state without lease `id`. Idempotent. */
  releaseLease(state: S, id: string, now: number): S;
}

/** Counts units that can be given back: a queue place never served, a charge the rule's `count` refunds. */
interface RefundRelease<S> {
  readonly release: 'refund';
  /**
   * The state with the charge given back, and how long it must be kept; undefined when nothing of it counts
   * any more (its window rolled over, it drained, the counter is gone): nothing is written then. Gives back
   * at most the charge and never takes a counter below empty.
   */
  refund(state: S, now: number, params: LimitParams, charge: Charge): { state: S; ttlMs: number } | undefined;
}

/**
 * One algorithm, described once: its name, the limit form and traits the rules checks read, its state's type
 * guard, its decision, and how what a request holds goes back. Each kind of release requires its functions,
 * so a descriptor that says `release: 'lease'` without `releaseLease` does not compile.
 */
export type AlgorithmDescriptor<
  N extends string = string,
  S = unknown,
  P extends LimitParams = LimitParams,
> = AlgorithmCore<N, S, P> & (NoRelease | LeaseRelease<S, P> | RefundRelease<S>);

/** True for a plain object (not null, not an array): the start of every state guard. */
export function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True when every named field of `value` is a number. */
export function hasNumbers(value: unknown, ...fields: readonly string[]): boolean {
  if (!isRecord(value)) return false;
  for (const field of fields) if (typeof value[field] !== 'number') return false;
  return true;
}

/** True when `value[field]` is a list of plain objects (a log, leases): a null or a number inside is not a state. */
export function hasRecords(value: unknown, field: string): boolean {
  if (!isRecord(value)) return false;
  const list = value[field];
  return Array.isArray(list) && list.every(isRecord);
}
