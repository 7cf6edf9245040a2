import { descriptorOf } from '../algorithms/index.js';
import type { Lists } from '../lists/contract.js';
import { PrefixTree } from '../lists/prefixTree.js';
import {
  addressOf,
  type Condition,
  conditionsHold,
  type IndexableRange,
  indexableRange,
  toCondition,
} from './conditions.js';
import type { CompiledRule, CompiledRules, Descriptors } from './contract.js';

/** A rule as the matcher checks it: the match fields left after the index lookup, and what it overrides. */
interface Entry {
  readonly rule: CompiledRule;
  /** Match fields not covered by the index bucket the rule was found in. */
  readonly rest: readonly (readonly [field: string, values: ReadonlySet<string>])[];
  /** Conditions (ranges, lists, negations) not covered by the index; undefined when there are none. */
  readonly conditions: readonly Condition[] | undefined;
  readonly expiresAt: number;
  /** Positions of every rule this one overrides, directly or through the rules it overrides. */
  readonly overrides: readonly number[];
}

const NONE: readonly CompiledRule[] = Object.freeze([]);

/**
 * Builds the frozen table. Each rule with a match is indexed under ONE of its fields (the most selective: the one
 * whose values are shared by the fewest rules), so a request looks up only the values it carries and verifies the
 * remaining fields of those candidates; rules with an empty match are candidates for every request.
 */
export function createMatcher(
  domain: string,
  version: string,
  rules: readonly CompiledRule[],
): CompiledRules {
  const positions = new Map(rules.map((rule, position) => [rule.name, position]));
  const shares = valueShares(rules);
  const index = new Map<string, Map<string, number[]>>();
  // Rules found by address: one prefix tree per address field, so 100,000 ranges cost one walk of the bits.
  const ranges = new Map<string, PrefixTree<number>>();
  const unconditional: number[] = [];
  const entries = rules.map((rule, position): Entry => {
    const field = mostSelectiveField(rule, shares);
    const byRange = field === undefined ? indexableRange(rule) : undefined;
    if (field !== undefined)
      for (const value of rule.match[field] ?? []) bucket(index, field, value).push(position);
    else if (byRange !== undefined) addRanges(ranges, byRange, position);
    else unconditional.push(position);
    const conditions = Object.entries(rule.conditions ?? {})
      .filter(([name]) => name !== byRange?.field)
      .map(([name, condition]) => toCondition(name, condition));
    return {
      rule,
      rest: Object.entries(rule.match)
        .filter(([name]) => name !== field)
        .map(([name, values]) => [name, new Set(values)] as const),
      conditions: conditions.length === 0 ? undefined : conditions,
      expiresAt: rule.expiresAt ?? Number.POSITIVE_INFINITY,
      overrides: overriddenBy(rule, rules, positions),
    };
  });
  const anyOverrides = entries.some((entry) => entry.overrides.length > 0);

  const always = Object.freeze(unconditional.map((position) => rules[position]!));
  // Each bucket's rules as one frozen list, answered as is when the bucket alone applies whole.
  const bucketRules = new Map<readonly number[], readonly CompiledRule[]>();
  for (const buckets of index.values())
    for (const hits of buckets.values())
      bucketRules.set(hits, Object.freeze(hits.map((position) => rules[position]!)));
  const allApply = (positions: readonly number[], descriptors: Descriptors, now: number, lists?: Lists) => {
    for (let i = 0; i < positions.length; i++)
      if (!applies(entries[positions[i]!]!, descriptors, now, lists)) return false;
    return true;
  };

  /** The rules with an empty match that apply; the shared frozen list when they all do (the usual case). */
  const unconditionalOnly = (
    descriptors: Descriptors,
    now: number,
    lists: Lists | undefined,
  ): readonly CompiledRule[] => {
    let applying: CompiledRule[] | undefined;
    for (let i = 0; i < unconditional.length; i++) {
      const position = unconditional[i]!;
      if (applies(entries[position]!, descriptors, now, lists)) applying?.push(rules[position]!);
      else applying ??= unconditional.slice(0, i).map((p) => rules[p]!);
    }
    if (applying === undefined) return always;
    return applying.length === 0 ? NONE : Object.freeze(applying);
  };

  const match = (descriptors: Descriptors, now: number, lists?: Lists): readonly CompiledRule[] => {
    let found: number[] | undefined;
    let sources = unconditional.length > 0 ? 1 : 0;
    // The first bucket hit, while it is the only source of candidates: no array is built for it.
    let only: number[] | undefined;
    for (const [field, buckets] of index) {
      const value = descriptors[field];
      const hits = value === undefined ? undefined : buckets.get(value);
      if (!hits) continue;
      if (sources === 0) only = hits;
      else {
        found = [...(found ?? only ?? unconditional), ...hits];
        only = undefined;
      }
      sources++;
    }
    // The usual request of a file with match conditions: one bucket holds every candidate and all apply.
    if (only !== undefined) {
      if (ranges.size === 0 && !anyOverrides && allApply(only, descriptors, now, lists))
        return bucketRules.get(only)!;
      found = [...only];
    }
    // Several ranges of one rule can hold the address: then it comes back once per range.
    let repeats = false;
    if (ranges.size > 0) {
      for (const [field, tree] of ranges) {
        const address = addressOf(descriptors, field);
        if (address === undefined) continue;
        found ??= [...unconditional];
        const before = found.length;
        tree.collect(address, found);
        if (found.length - before > 1) repeats = true;
        if (found.length > before) sources++;
      }
      if (found !== undefined && found.length === unconditional.length && !anyOverrides) found = undefined;
    }
    if (found === undefined) {
      if (!anyOverrides) return unconditionalOnly(descriptors, now, lists);
      found = unconditional;
    }
    if (found.length === 0) return NONE;
    // A rule sits in one bucket only, so candidates are distinct; sorting restores file order across buckets.
    let candidates = sources > 1 || repeats ? found.sort((a, b) => a - b) : found;
    if (repeats) candidates = candidates.filter((position, i) => position !== candidates[i - 1]);
    const applying = candidates.filter((position) => applies(entries[position]!, descriptors, now, lists));
    const kept = anyOverrides ? withoutOverridden(applying, entries) : applying;
    return kept.length === 0 ? NONE : Object.freeze(kept.map((position) => rules[position]!));
  };

  return Object.freeze({
    domain,
    version,
    rules: Object.freeze([...rules]),
    match,
    lists: Object.freeze(listNames(rules)),
    actions: rules.some((rule) => rule.action !== undefined),
    adaptive: rules.some((rule) => rule.adaptive !== undefined || rule.priority !== undefined),
    plain: rules.every(onlyCounts),
  });
}

/**
 * A rule that only counts, in the limiter's store: no action, policy (ban, penalty, idempotency, settle),
 * `count`, lease, shards, adaptive limit or priority, and an algorithm that holds no lease.
 */
function onlyCounts(rule: CompiledRule): boolean {
  const { ban, penalty, idempotentMs, settle, count, lease, shards, adaptive, priority } = rule;
  return (
    rule.action === undefined &&
    rule.scope === 'store' &&
    ban === undefined &&
    penalty === undefined &&
    idempotentMs === undefined &&
    settle !== true &&
    count === undefined &&
    lease === undefined &&
    (shards === undefined || shards <= 1) &&
    adaptive === undefined &&
    priority === undefined &&
    descriptorOf(rule.algorithm).release !== 'lease'
  );
}

/**
 * A candidate applies when its other match fields agree, its conditions hold, every key descriptor is present,
 * and it has not expired.
 */
function applies(entry: Entry, descriptors: Descriptors, now: number, lists: Lists | undefined): boolean {
  if (entry.expiresAt <= now) return false;
  for (const [field, values] of entry.rest) {
    const value = descriptors[field];
    if (value === undefined || !values.has(value)) return false;
  }
  if (entry.conditions !== undefined && !conditionsHold(entry.conditions, descriptors, lists)) return false;
  const key = entry.rule.key;
  for (let i = 0; i < key.length; i++) if (descriptors[key[i]!] === undefined) return false;
  return true;
}

/** Drops every rule overridden by another rule that applies to the same request. */
function withoutOverridden(applying: readonly number[], entries: readonly Entry[]): number[] {
  const overridden = new Set<number>();
  for (const position of applying) for (const target of entries[position]!.overrides) overridden.add(target);
  return overridden.size === 0 ? [...applying] : applying.filter((position) => !overridden.has(position));
}

/** The transitive chain of overrides from `rule` (validation has ruled out cycles and dangling names). */
function overriddenBy(
  rule: CompiledRule,
  rules: readonly CompiledRule[],
  positions: Map<string, number>,
): number[] {
  const chain: number[] = [];
  let target = rule.overrides === undefined ? undefined : positions.get(rule.overrides);
  while (target !== undefined && !chain.includes(target)) {
    chain.push(target);
    const next = rules[target]?.overrides;
    target = next === undefined ? undefined : positions.get(next);
  }
  return chain;
}

/** For each field and value, how many rules match on it. */
function valueShares(rules: readonly CompiledRule[]): Map<string, Map<string, number>> {
  const shares = new Map<string, Map<string, number>>();
  for (const rule of rules) {
    for (const [field, values] of Object.entries(rule.match)) {
      const counts = shares.get(field) ?? new Map<string, number>();
      shares.set(field, counts);
      for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
    }
  }
  return shares;
}

function mostSelectiveField(
  rule: CompiledRule,
  shares: Map<string, Map<string, number>>,
): string | undefined {
  let best: string | undefined;
  let bestCost = Number.POSITIVE_INFINITY;
  for (const [field, values] of Object.entries(rule.match)) {
    const counts = shares.get(field);
    const cost = values.reduce((sum, value) => sum + (counts?.get(value) ?? 0), 0);
    if (cost < bestCost) [best, bestCost] = [field, cost];
  }
  return best;
}

function bucket(index: Map<string, Map<string, number[]>>, field: string, value: string): number[] {
  const buckets = index.get(field) ?? new Map<string, number[]>();
  index.set(field, buckets);
  const found = buckets.get(value) ?? [];
  buckets.set(value, found);
  return found;
}

function addRanges(trees: Map<string, PrefixTree<number>>, byRange: IndexableRange, position: number): void {
  const tree = trees.get(byRange.field) ?? new PrefixTree<number>();
  trees.set(byRange.field, tree);
  for (const range of byRange.ranges) tree.add(range, position);
}

/** Every list the rules name, once each, in file order. */
function listNames(rules: readonly CompiledRule[]): string[] {
  const names = new Set<string>();
  for (const rule of rules)
    for (const condition of Object.values(rule.conditions ?? {}))
      if (condition.list !== undefined) names.add(condition.list);
  return [...names];
}
