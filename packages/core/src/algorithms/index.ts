import type { Charge } from './charge.js';
import { concurrency } from './concurrency.js';
import type { AlgorithmDescriptor } from './descriptor.js';
import { firstRequestWindow } from './firstRequestWindow.js';
import { fixedWindow } from './fixedWindow.js';
import { gcra } from './gcra.js';
import { leakyBucket } from './leakyBucket.js';
import type { LimitParams, Outcome } from './limits.js';
import { quota } from './quota.js';
import { slidingLog } from './slidingLog.js';
import { slidingWindow } from './slidingWindow.js';
import { tokenBucket } from './tokenBucket.js';

export { type Charge, undrained } from './charge.js';
export {
  type ConcurrencyLease,
  type ConcurrencyParams,
  type ConcurrencyState,
  concurrency,
  releaseLease,
} from './concurrency.js';
export { refundDebt } from './debt.js';
export type { AlgorithmDescriptor, LimitForm, ReleaseKind } from './descriptor.js';
export { type FirstRequestWindowState, firstRequestWindow } from './firstRequestWindow.js';
export { type FixedWindowState, fixedWindow } from './fixedWindow.js';
export { type GcraState, gcra } from './gcra.js';
export { type LeakyBucketState, leakyBucket, refundLeaky } from './leakyBucket.js';
export type { PeriodCountState } from './periodCount.js';
export { calendarPeriod, civilFromDays, daysFromCivil, type QuotaState, quota } from './quota.js';
export { type LogEntry, type SlidingLogState, slidingLog } from './slidingLog.js';
export { type SlidingWindowState, slidingWindow } from './slidingWindow.js';
export { type TokenBucketState, tokenBucket } from './tokenBucket.js';

/**
 * The registry: one line per algorithm, in the order the docs list them. Names, the rules schema's enum, the
 * rules checks and the stores all read it; a new algorithm is its own module plus one line here.
 */
const DESCRIPTORS = [
  fixedWindow,
  firstRequestWindow,
  slidingWindow,
  slidingLog,
  tokenBucket,
  gcra,
  leakyBucket,
  concurrency,
  quota,
] as const;

type Registered = (typeof DESCRIPTORS)[number];

/** The counting algorithms a rule can use. */
export type AlgorithmName = Registered['name'];

/** The descriptor registered under `name`, with its own state and params types. */
export type DescriptorOf<K extends AlgorithmName> = Extract<Registered, { readonly name: K }>;

/** Every algorithm by name, each typed with its own state and params. */
export type AlgorithmRegistry = { readonly [K in AlgorithmName]: DescriptorOf<K> };

/** The algorithms by name. */
export const algorithms = Object.freeze(
  Object.fromEntries(DESCRIPTORS.map((descriptor) => [descriptor.name, descriptor])),
) as AlgorithmRegistry;

/** Every algorithm name, in registry order (the docs' order). */
export const ALGORITHM_NAMES = DESCRIPTORS.map(
  (descriptor) => descriptor.name,
) as readonly AlgorithmName[] as [AlgorithmName, ...AlgorithmName[]];

/** An algorithm's descriptor with its state and params left open, as stores hold them. */
export type AnyDescriptor = AlgorithmDescriptor<AlgorithmName, unknown, LimitParams>;

/** The descriptor of `name`, for code that keeps states opaquely (stores). */
export function descriptorOf(name: AlgorithmName): AnyDescriptor {
  return algorithms[name] as unknown as AnyDescriptor;
}

/** The names of the registered algorithms for which `trait` holds, in registry order. */
export function namesWhere(trait: (descriptor: AnyDescriptor) => boolean): readonly AlgorithmName[] {
  return ALGORITHM_NAMES.filter((name) => trait(descriptorOf(name)));
}

/**
 * Runs algorithm `name` on a state kept opaquely by a store. A state that is not this algorithm's (the rule was
 * reloaded with another algorithm under its name, or something else wrote the key) is stale: the key counts
 * afresh, as on Redis. `leaseId` is read only by algorithms whose requests hold a lease.
 */
export function decideByName(
  name: AlgorithmName,
  state: unknown,
  now: number,
  params: LimitParams,
  cost: number,
  leaseId = '',
): Outcome<unknown> {
  return DECIDERS[name](state, now, params, cost, leaseId);
}

/** A decide as stores call it: the lease id last, read only by algorithms whose requests hold a lease. */
type Decider = (
  state: unknown,
  now: number,
  params: LimitParams,
  cost: number,
  leaseId: string,
) => Outcome<unknown>;

/**
 * Each algorithm's decide with its lease id applied and another algorithm's state read as none: a plain function
 * per name (no descriptor read per check).
 */
function deciderOf(descriptor: AnyDescriptor): Decider {
  const { decide, isState } = descriptor;
  const own = (state: unknown) => (state === undefined || isState(state) ? state : undefined);
  if (descriptor.release === 'lease') {
    const { withLease } = descriptor;
    return (state, now, params, cost, leaseId) => decide(own(state), now, withLease(params, leaseId), cost);
  }
  return (state, now, params, cost) => decide(own(state), now, params, cost);
}

const DECIDERS = Object.fromEntries(
  ALGORITHM_NAMES.map((name) => [name, deciderOf(descriptorOf(name))]),
) as Readonly<Record<AlgorithmName, Decider>>;

/**
 * What `releasedState` reads of a store's Lease (types.ts): the algorithm holding it, the lease id, the charge
 * to give back. Declared here so the registry imports nothing from the contracts that read its names.
 */
export interface HeldLease {
  readonly algorithm: AlgorithmName;
  readonly id: string;
  readonly refund?: Charge & { readonly params: LimitParams };
}

/**
 * The algorithm holding `lease`, which names it. The one fallback, for a lease built by untyped code without
 * one: a refund is a leaky_bucket place, an id a concurrency lease (what such leases were before they named it).
 * Every store reads it here (MemoryStore, the evaluator, RedisStore's codec).
 */
export function holderName(lease: HeldLease): AlgorithmName {
  return (
    (lease.algorithm as AlgorithmName | undefined) ??
    (lease.refund === undefined ? 'concurrency' : 'leaky_bucket')
  );
}

function holderOf(lease: HeldLease): AnyDescriptor {
  return descriptorOf(holderName(lease));
}

/**
 * The state a store keeps once `lease` is given back, asked of the lease's algorithm: a lease dropped, or
 * units refunded (a queue place, a charge the rule's `count` does not keep; with the state's new TTL).
 * Undefined when there is nothing to change: the stored value is not that algorithm's state (the rule was
 * reloaded with another algorithm), it holds no such lease, or nothing of the charge counts any more.
 */
export function releasedState(
  state: unknown,
  lease: HeldLease,
  now: number,
): { readonly state: unknown; readonly ttlMs?: number } | undefined {
  const descriptor = holderOf(lease);
  if (!descriptor.isState(state)) return undefined;
  if (descriptor.release === 'lease') return { state: descriptor.releaseLease(state, lease.id, now) };
  if (descriptor.release === 'refund' && lease.refund !== undefined) {
    return descriptor.refund(state, now, lease.refund.params, lease.refund);
  }
  return undefined;
}
