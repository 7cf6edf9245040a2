import type { CompiledRule, CompiledRules, Descriptors } from '../types.js';

/** A rule as the matcher checks it: the match fields left after the index lookup, and what it overrides. */
interface Entry {
  readonly rule: CompiledRule;
  /** Match fields not covered by the index bucket the rule was found in. */
  readonly rest: readonly (readonly [field: string, values: ReadonlySet<string>])[];
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
  const unconditional: number[] = [];
  const entries = rules.map((rule, position): Entry => {
    const field = mostSelectiveField(rule, shares);
    if (field === undefined) unconditional.push(position);
    else for (const value of rule.match[field] ?? []) bucket(index, field, value).push(position);
    return {
      rule,
      rest: Object.entries(rule.match)
        .filter(([name]) => name !== field)
        .map(([name, values]) => [name, new Set(values)] as const),
      expiresAt: rule.expiresAt ?? Number.POSITIVE_INFINITY,
      overrides: overriddenBy(rule, rules, positions),
    };
  });
  const anyOverrides = entries.some((entry) => entry.overrides.length > 0);

  const always = Object.freeze(unconditional.map((position) => rules[position]!));

  /** The rules with an empty match that apply; the shared frozen list when they all do (the usual case). */
  const unconditionalOnly = (descriptors: Descriptors, now: number): readonly CompiledRule[] => {
    let applying: CompiledRule[] | undefined;
    for (let i = 0; i < unconditional.length; i++) {
      const position = unconditional[i]!;
      if (applies(entries[position]!, descriptors, now)) applying?.push(rules[position]!);
      else applying ??= unconditional.slice(0, i).map((p) => rules[p]!);
    }
    if (applying === undefined) return always;
    return applying.length === 0 ? NONE : Object.freeze(applying);
  };

  const match = (descriptors: Descriptors, now: number): readonly CompiledRule[] => {
    let found: number[] | undefined;
    let sources = unconditional.length > 0 ? 1 : 0;
    for (const [field, buckets] of index) {
      const value = descriptors[field];
      const hits = value === undefined ? undefined : buckets.get(value);
      if (!hits) continue;
      found = found === undefined ? [...unconditional, ...hits] : [...found, ...hits];
      sources++;
    }
    if (found === undefined) {
      if (!anyOverrides) return unconditionalOnly(descriptors, now);
      found = unconditional;
    }
    if (found.length === 0) return NONE;
    // A rule sits in one bucket only, so candidates are distinct; sorting restores file order across buckets.
    const candidates = sources > 1 ? found.sort((a, b) => a - b) : found;
    const applying = candidates.filter((position) => applies(entries[position]!, descriptors, now));
    const kept = anyOverrides ? withoutOverridden(applying, entries) : applying;
    return kept.length === 0 ? NONE : Object.freeze(kept.map((position) => rules[position]!));
  };

  return Object.freeze({ domain, version, rules: Object.freeze([...rules]), match });
}

/** A candidate applies when its other match fields agree, every key descriptor is present, and it has not expired. */
function applies(entry: Entry, descriptors: Descriptors, now: number): boolean {
  if (entry.expiresAt <= now) return false;
  for (const [field, values] of entry.rest) {
    const value = descriptors[field];
    if (value === undefined || !values.has(value)) return false;
  }
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
