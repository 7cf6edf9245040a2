import type { Check, CheckResult } from '../store/contract.js';
import { type Counter, countBefore, type WindowView } from './ledger.js';
import { globalTag, grantedName, regionName } from './windows.js';

/**
 * One round's work on one counter's window, as ONE pair of checks on the global store (same tag, so one
 * atomic call on every store): G, the slices granted to every region, and R, those granted to this region.
 * - `read`: both at cost 0 with no limit that can deny (shadow): what G and R are.
 * - `take`: a slice of `units`: G within the rule's limit, and R only if it is still what this gateway last
 *   read (its limit is that plus `units`: a compare-and-set), so two gateways of a region racing for a slice
 *   get one. All or nothing: a G that has no room left, or an R that moved, commits neither.
 * - `charge`: `units` admitted beyond the grant (optimistic first slice, a partition, a restarted global
 *   store) added to G whatever its limit, and to R under the same compare-and-set, so that several gateways
 *   of the region rejoining at once charge the excess once.
 */
export interface Op {
  readonly counter: Counter;
  readonly view: WindowView;
  readonly kind: 'read' | 'take' | 'charge';
  readonly units: number;
  /** The `now` the global store decides with: the round's, or the next window's start for a slice ahead. */
  readonly at: number;
}

/** A limit no count reaches: a read or a charge is never refused by it. */
export const UNBOUNDED = 1e15;

/** The two checks of an op: [G, R]. */
export function opChecks(op: Op, region: string): [Check, Check] {
  const { rule } = op.counter;
  const tag = globalTag(op.counter.tag, op.view);
  const read = op.kind === 'read';
  const mode = read ? 'shadow' : 'enforce';
  const check = (name: string, limit: number): Check => ({
    rule: name,
    tag,
    algorithm: rule.algorithm,
    params: { ...rule.params, limit, burst: limit },
    cost: op.units,
    mode,
  });
  const granted = op.kind === 'take' ? rule.params.limit : UNBOUNDED;
  const own = read ? UNBOUNDED : op.view.regionGranted + op.units;
  return [check(grantedName(rule.name), granted), check(regionName(rule.name, region), own)];
}

/** What an op's answer did: committed (a slice or a charge went in) or unknown (another op of the call refused). */
export interface Applied {
  readonly committed: boolean;
  readonly ambiguous: boolean;
}

/**
 * Reads an op's two answers into its view. `blocked`: an enforcing check of the call was refused, so on a
 * single server nothing of the call was written, while on a Cluster other slots' ops were: an allowed op is
 * then unknown, and the view keeps only what is certain (the counts before the call) until it is read again.
 */
export function applyAnswer(op: Op, g: CheckResult, r: CheckResult, blocked: boolean): Applied {
  const { view, units } = op;
  const moves = op.kind !== 'read' && g.allowed && r.allowed;
  const committed = moves && !blocked;
  const ambiguous = moves && blocked;
  const added = committed ? units : 0;
  const gBefore = countBefore(g, units);
  const rBefore = countBefore(r, units);
  const gNow = gBefore.count + added;
  const rNow = rBefore.count + added;
  // An exact read may show G lower than before: the global store lost its data; take it as it is.
  view.globalGranted = gBefore.exact && !ambiguous ? gNow : Math.max(view.globalGranted, gNow);
  view.known = true;
  if (ambiguous || !rBefore.exact) {
    view.regionGranted = Math.max(view.regionGranted, rNow);
    view.exact = false;
    view.held = Math.max(view.held, view.regionGranted);
  } else {
    view.regionGranted = rNow;
    view.exact = true;
    // Other gateways' slices show here too; a count below `held` is a loss, charged back by the next op.
    if (rNow > view.held) view.held = rNow;
  }
  if (committed && op.kind === 'take') {
    view.lastSlice = units;
    view.starved = false;
  }
  return { committed, ambiguous };
}

/** How big slices are: from the limit and the region's demand over the time a slice must last. */
export interface Sizing {
  /** Share of the limit of the smallest slice (the first, before any demand is known). */
  readonly firstSlice: number;
  /** Share of the limit a slice may reach (demand-sized, or doubled after a shortage). */
  readonly maxSlice: number;
  /** How long a slice must last: two sync rounds and their round trips. */
  readonly horizonMs: number;
}

/** The smallest slice of a limit: its first, optimistic one (at least 1 unless firstSlice is 0). */
export function firstSliceOf(limit: number, share: number): number {
  return share === 0 ? 0 : Math.max(1, Math.ceil(limit * share));
}

/**
 * The next slice of a counter's view: the demand of one horizon, doubled after a shortage. Near the end of the
 * budget (a slice would take half or more of the room left) half the room: regions racing for the last units
 * each get part of them, where a take of the whole room fails whenever anyone else took any since it was read.
 */
function sliceOf(counter: Counter, view: WindowView, sizing: Sizing, room: number): number {
  const limit = counter.rule.params.limit;
  const largest = Math.max(1, Math.ceil(limit * sizing.maxSlice));
  let slice = Math.max(firstSliceOf(limit, sizing.firstSlice), 1, Math.ceil(counter.rate * sizing.horizonMs));
  if (view.starved) slice = Math.max(slice, 2 * view.lastSlice);
  slice = Math.min(slice, largest);
  return 2 * slice >= room ? Math.ceil(room / 2) : slice;
}

/**
 * The op a view needs this round, if any: a first slice for a window not yet known, a read when the last
 * answer left R uncertain, a charge when the region admitted (or was granted) more than R shows, a slice when
 * less than a horizon's demand is left (or a request was refused short of it), else a read while in use.
 */
export function planOp(
  counter: Counter,
  view: WindowView,
  at: number,
  sizing: Sizing,
  inUse: boolean,
): Op | undefined {
  const limit = counter.rule.params.limit;
  const make = (kind: Op['kind'], units: number): Op => ({ counter, view, kind, units, at });
  if (!view.known) {
    // Others of the region already count here: learn their grant before taking one.
    if (view.used > firstSliceOf(limit, sizing.firstSlice)) return make('read', 0);
    const slice = sliceOf(counter, view, sizing, limit);
    return slice > 0 ? make('take', slice) : make('read', 0);
  }
  if (!view.exact) return make('read', 0);
  const target = Math.max(view.used, view.held);
  if (target > view.regionGranted) return make('charge', target - view.regionGranted);
  const room = limit - view.globalGranted;
  const demand = Math.ceil(counter.rate * sizing.horizonMs);
  const short = view.starved || (demand > 0 && view.held - view.used < demand);
  if (room > 0 && short) return make('take', sliceOf(counter, view, sizing, room));
  return inUse ? make('read', 0) : undefined;
}

/** Ops in the order a capped round sends them: charges, first slices, slices, then reads. */
export function byUrgency(a: Op, b: Op): number {
  return urgency(a) - urgency(b);
}

function urgency(op: Op): number {
  if (op.kind === 'charge') return 0;
  if (op.kind === 'take') return op.view.known ? 2 : 1;
  return 3;
}
