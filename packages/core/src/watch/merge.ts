/**
 * Merging the boards of a fleet: counts and rates summed per rule, per route and per key (tag) across gateways,
 * with the merged error bound of the sketches, and the rules versions each gateway runs (mixed ones flagged).
 *
 * The bound. Gateway g's sketch of a rule saw N_g requests with k counters, and its floor F_g <= N_g/k. For a
 * key it lists, its count c_g is over its true count by at most its error e_g <= F_g; a key it does not list was
 * seen there at most F_g times. Summed over the gateways that list the key, `count` is within `bound` = sum of
 * F_g (<= N/k, N the fleet's requests of the rule) of the fleet's true count, either way; `low` (sum of c_g - e_g)
 * and `high` (count plus F_g of each gateway not listing it) bracket the true count. Every key seen more than
 * `bound` times in all is listed by some gateway.
 */

import type { Mode } from '../rules/contract.js';
import type { BoardRates, BoardSketch, GatewayBoard, GatewaySummary } from './board.js';

export type { GatewaySummary } from './board.js';

/** One key of the fleet: `count` within `bound` of the truth; the true count lies in [low, high]. */
export interface MergedKey {
  readonly tag: string;
  readonly count: number;
  readonly low: number;
  readonly high: number;
  /** Its rate over the gateways' last intervals, summed. */
  readonly perSecond: number;
  /** Gateways that list it. */
  readonly gateways: number;
}

/** One sketch of the fleet. */
export interface MergedSketch {
  /** N: the keys offered, over every gateway. */
  readonly total: number;
  /** Any `count` is within this of the truth; at most N/k. */
  readonly bound: number;
  /** The fewest counters a gateway kept (k of the N/k bound). */
  readonly capacity: number;
  /** Highest count first. */
  readonly keys: readonly MergedKey[];
}

/** A version and the gateways that run it. */
export interface VersionShare {
  readonly version: string;
  readonly gateways: readonly string[];
}

/** One rule across the fleet. */
export interface MergedRule {
  readonly domain: string;
  readonly rule: string;
  readonly mode: Mode;
  /** The rule's own versions (a hash of its definition) and who runs each; more than one: `mixed`. */
  readonly versions: readonly VersionShare[];
  readonly mixed: boolean;
  readonly requests: number;
  readonly denied: number;
  readonly shadowDenied: number;
  readonly failedOpen: number;
  readonly rates: BoardRates;
  readonly keys: MergedSketch;
  readonly denials: MergedSketch;
  /** Routes, most requests first: [route, requests, denied]. */
  readonly routes: readonly (readonly [string, number, number])[];
}

/** The rules versions of one domain across the fleet. */
export interface DomainVersions {
  readonly domain: string;
  readonly versions: readonly VersionShare[];
  readonly mixed: boolean;
}

/** The fleet's board. */
export interface MergedBoard {
  readonly gateways: readonly GatewaySummary[];
  readonly domains: readonly DomainVersions[];
  /** True when some domain's gateways run more than one rules version, or some rule more than one version. */
  readonly mixed: boolean;
  readonly rules: readonly MergedRule[];
}

/** Options of {@link mergeBoards}. */
export interface MergeOptions {
  /** Keys listed per sketch at most; default 64. */
  readonly keys?: number;
}

/** Merges gateways' boards (from `Board.read` through `parseBoard`, or `limiter.hotKeys()`) into the fleet's. */
export function mergeBoards(boards: readonly GatewayBoard[], options: MergeOptions = {}): MergedBoard {
  const sorted = [...boards].sort((a, b) => a.gateway.localeCompare(b.gateway));
  const byRule = new Map<string, { domain: string; parts: [string, GatewayBoard['rules'][number]][] }>();
  for (const board of sorted) {
    for (const rule of board.rules) {
      const id = `${board.domain}\u0000${rule.rule}`;
      const entry = byRule.get(id) ?? { domain: board.domain, parts: [] };
      entry.parts.push([board.gateway, rule]);
      byRule.set(id, entry);
    }
  }
  const limit = options.keys ?? 64;
  const rules = [...byRule.values()].map(({ domain, parts }) => mergeRule(domain, parts, limit));
  const domains = domainVersions(sorted);
  return {
    gateways: sorted.map(summaryOf),
    domains,
    mixed: domains.some((d) => d.mixed) || rules.some((r) => r.mixed),
    rules: rules.sort((a, b) => a.domain.localeCompare(b.domain) || a.rule.localeCompare(b.rule)),
  };
}

function mergeRule(
  domain: string,
  parts: readonly [string, GatewayBoard['rules'][number]][],
  limit: number,
): MergedRule {
  const rules = parts.map(([, rule]) => rule);
  const sum = (read: (rule: GatewayBoard['rules'][number]) => number) =>
    rules.reduce((total, rule) => total + read(rule), 0);
  const versions = shares(parts.map(([gateway, rule]) => [rule.version, gateway]));
  return {
    domain,
    rule: rules[0]!.rule,
    mode: rules[0]!.mode,
    versions,
    mixed: versions.length > 1,
    requests: sum((r) => r.requests),
    denied: sum((r) => r.denied),
    shadowDenied: sum((r) => r.shadowDenied),
    failedOpen: sum((r) => r.failedOpen),
    rates: {
      requests: round(sum((r) => r.rates.requests)),
      denied: round(sum((r) => r.rates.denied)),
      shadowDenied: round(sum((r) => r.rates.shadowDenied)),
    },
    keys: mergeSketches(
      rules.map((r) => r.keys),
      limit,
    ),
    denials: mergeSketches(
      rules.map((r) => r.denials),
      limit,
    ),
    routes: mergeRoutes(rules.flatMap((r) => r.routes)),
  };
}

/** The sketches of one rule on every gateway, merged (see the bound above). */
export function mergeSketches(sketches: readonly BoardSketch[], limit: number): MergedSketch {
  const bound = sketches.reduce((total, s) => total + s.floor, 0);
  const found = new Map<
    string,
    { count: number; low: number; floors: number; perSecond: number; gateways: number }
  >();
  for (const sketch of sketches) {
    for (const [tag, count, error, perSecond] of sketch.keys) {
      const key = found.get(tag) ?? { count: 0, low: 0, floors: 0, perSecond: 0, gateways: 0 };
      found.set(tag, key);
      key.count += count;
      key.low += count - error;
      key.floors += sketch.floor;
      key.perSecond += perSecond ?? 0;
      key.gateways++;
    }
  }
  const keys: MergedKey[] = [...found].map(([tag, key]) => ({
    tag,
    count: key.count,
    low: key.low,
    // The gateways not listing it may each have seen it up to their floor.
    high: key.count + bound - key.floors,
    perSecond: round(key.perSecond),
    gateways: key.gateways,
  }));
  keys.sort((a, b) => b.count - a.count || a.tag.localeCompare(b.tag));
  return {
    total: sketches.reduce((total, s) => total + s.total, 0),
    bound,
    capacity: sketches.length === 0 ? 0 : Math.min(...sketches.map((s) => s.capacity)),
    keys: keys.slice(0, limit),
  };
}

function mergeRoutes(routes: readonly (readonly [string, number, number])[]): [string, number, number][] {
  const summed = new Map<string, [string, number, number]>();
  for (const [route, requests, denied] of routes) {
    const entry = summed.get(route) ?? [route, 0, 0];
    entry[1] += requests;
    entry[2] += denied;
    summed.set(route, entry);
  }
  return [...summed.values()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

/** A board without its rules: the fields of GatewaySummary, and only those (a board may carry more). */
function summaryOf({ gateway, domain, version, at, since, intervalMs, store }: GatewayBoard): GatewaySummary {
  return { gateway, domain, version, at, since, intervalMs, store };
}

/** Each domain's rules versions and who runs them. */
function domainVersions(boards: readonly GatewayBoard[]): DomainVersions[] {
  const byDomain = new Map<string, [string, string][]>();
  for (const board of boards) {
    const list = byDomain.get(board.domain) ?? [];
    list.push([board.version, board.gateway]);
    byDomain.set(board.domain, list);
  }
  return [...byDomain]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([domain, pairs]) => {
      const versions = shares(pairs);
      return { domain, versions, mixed: versions.length > 1 };
    });
}

/** [version, gateway] pairs as versions with their gateways, the most run first. */
function shares(pairs: readonly (readonly [string, string])[]): VersionShare[] {
  const byVersion = new Map<string, string[]>();
  for (const [version, gateway] of pairs) {
    const gateways = byVersion.get(version) ?? [];
    gateways.push(gateway);
    byVersion.set(version, gateways);
  }
  return [...byVersion]
    .map(([version, gateways]) => ({ version, gateways }))
    .sort((a, b) => b.gateways.length - a.gateways.length || a.version.localeCompare(b.version));
}

const round = (value: number) => Math.round(value * 100) / 100;
