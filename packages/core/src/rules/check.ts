import { descriptorOf, namesWhere } from '../algorithms/index.js';
import { durationMs, isCalendarPeriod } from '../base/duration.js';
import { closest, show } from '../base/show.js';
import { checkAction } from './checkActions.js';
import { checkMatchRanges } from './checkMatch.js';
import { dayStartMs, expiryMs } from './dates.js';
import type { FieldPath, Finding } from './findings.js';
import { checkPolicies } from './policies.js';
import { type LimitSpec, MAX_NAME_LENGTH, type ParsedRule } from './schema.js';
import { checkStages } from './stages.js';

/** Algorithms whose `burst` applies, as a message lists them: "a, b and c". */
const BURST_NAMES = spoken(namesWhere((descriptor) => descriptor.burst));

/** Algorithms whose units a gateway can take in a batch and spend later (not leases, not queue places). */
const LEASABLE_NAMES = namesWhere((descriptor) => descriptor.leasable).join(', ');

/** Algorithms that take a calendar period, as a message lists them. */
const CALENDAR_NAMES = spoken(namesWhere((descriptor) => descriptor.calendar));

/** Algorithms whose rules write `{concurrent, lease}`, as a message lists them. */
const CONCURRENT_NAMES = spoken(namesWhere((descriptor) => descriptor.limit === 'concurrent'));

/** Names as a sentence lists them: "a", "a and b", "a, b and c". */
function spoken(names: readonly string[]): string {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

/**
 * Problems of meaning inside one rule whose shape is valid: field combinations that make no sense. `raw` is
 * the rule as written, for fields whose defaults hide whether they were given.
 */
export function checkRule(rule: ParsedRule, at: FieldPath, raw: unknown = rule): Finding[] {
  const found = [...checkAction(raw, rule, at), ...checkMatchRanges(rule, at)];
  // Deny and allow rules count nothing: the counting checks do not apply (checkAction refuses their fields).
  if (rule.action !== 'limit' || rule.limit === undefined) return found;
  const counted = { ...rule, limit: rule.limit };
  found.push(
    ...checkPolicies(rule, at),
    ...checkStages(rule, at),
    ...checkLimit(counted, at),
    ...checkKey(rule, at),
    ...checkShards(counted, at),
    ...checkLease(counted, at),
    ...checkGlobalScope(counted, at),
  );
  return found;
}

/** Algorithms a global budget can be drawn in slices from: a count per window (see regions/). */
const SLICED_ALGORITHMS: readonly string[] = ['fixed_window', 'quota'];

/** Longest name of a `scope: global` rule: its global counters add `.r.<region>` (32 characters at most). */
export const MAX_GLOBAL_RULE_NAME = MAX_NAME_LENGTH - 36;

/** Fields that change a rule's counting in ways a region's grant cannot follow. */
const NOT_GLOBAL = ['shards', 'lease', 'adaptive', 'priority', 'challenge'] as const;

/**
 * `scope: global` draws on one budget shared by every region, granted in slices of a count per window: only
 * fixed_window and quota divide so; fields that split or scale the counter do not mix with it.
 */
function checkGlobalScope(rule: CountedRule, at: FieldPath): Finding[] {
  if (rule.scope !== 'global') {
    return rule.partition_margin === undefined
      ? []
      : [{ path: [...at, 'partition_margin'], message: 'partition_margin only applies to scope: global' }];
  }
  const found: Finding[] = [];
  if (!SLICED_ALGORITHMS.includes(rule.algorithm))
    found.push({
      path: [...at, 'algorithm'],
      message: `scope: global takes algorithm: fixed_window or quota (a budget granted in slices is a count per window); this rule uses ${rule.algorithm}`,
    });
  if ('concurrent' in rule.limit) return found;
  for (const field of NOT_GLOBAL)
    if (rule[field] !== undefined)
      found.push({ path: [...at, field], message: `${field} does not mix with scope: global: remove one` });
  if (rule.name.length > MAX_GLOBAL_RULE_NAME)
    found.push({
      path: [...at, 'name'],
      message: `a scope: global rule's name must be at most ${MAX_GLOBAL_RULE_NAME} characters (its global counters add the region's name), got ${rule.name.length}`,
    });
  return found;
}

/** A rule that counts: its limit is there. */
type CountedRule = ParsedRule & { readonly limit: LimitSpec };

/** The units a rule can hold at once: its burst where it has one, else its limit. */
function capacityOf(rule: CountedRule): number {
  const { limit } = rule;
  return 'concurrent' in limit ? limit.concurrent : Math.min(limit.requests, limit.burst ?? limit.requests);
}

function checkShards(rule: CountedRule, at: FieldPath): Finding[] {
  const { shards } = rule;
  if (shards === undefined || shards === 1) return [];
  const capacity = capacityOf(rule);
  if (capacity > 0 && shards > capacity) {
    return [
      {
        path: [...at, 'shards'],
        message: `${shards} shards of a limit of ${capacity} leave a sub-counter with less than 1; use at most ${capacity}`,
      },
    ];
  }
  return [];
}

function checkLease(rule: CountedRule, at: FieldPath): Finding[] {
  const { lease } = rule;
  if (lease === undefined) return [];
  const path = [...at, 'lease'];
  if (!descriptorOf(rule.algorithm).leasable) {
    return [
      {
        path,
        message: `lease only applies to counted algorithms (${LEASABLE_NAMES}); this rule uses ${rule.algorithm}`,
      },
    ];
  }
  if (rule.scope === 'local') {
    return [{ path, message: 'a local rule makes no store call to save: remove lease or scope: local' }];
  }
  const share = Math.floor(capacityOf(rule) / (rule.shards ?? 1));
  if (share > 0 && lease.batch > share) {
    return [
      {
        path: [...path, 'batch'],
        message: `a batch of ${lease.batch} is more than the ${share} units a counter holds; use at most ${share}`,
      },
    ];
  }
  return [];
}

function checkLimit(rule: CountedRule, at: FieldPath): Finding[] {
  const { limit, algorithm } = rule;
  const descriptor = descriptorOf(algorithm);
  const path = [...at, 'limit'];
  if ('concurrent' in limit) {
    if (descriptor.limit !== 'concurrent') {
      return [
        {
          path: [...path, 'concurrent'],
          message: `a concurrent limit needs algorithm: ${CONCURRENT_NAMES} (this rule uses ${algorithm})`,
        },
      ];
    }
    return limit.concurrent === 0 && rule.expires === undefined
      ? [zeroWithoutExpiry([...path, 'concurrent'])]
      : [];
  }
  if (descriptor.limit === 'concurrent') {
    return [
      { path, message: `algorithm ${algorithm} counts leases: write limit: {concurrent: N, lease: 60s}` },
    ];
  }
  const found: Finding[] = [];
  if (limit.burst !== undefined && !descriptor.burst) {
    found.push({
      path: [...path, 'burst'],
      message: `burst only applies to ${BURST_NAMES} (this rule uses ${algorithm})`,
    });
  }
  if (isCalendarPeriod(limit.per) && !descriptor.calendar) {
    found.push({
      path: [...path, 'per'],
      message: `"${limit.per}" is a calendar period, only for algorithm: ${CALENDAR_NAMES}; write a duration such as 1d`,
    });
  }
  if (limit.requests === 0 && rule.expires === undefined)
    found.push(zeroWithoutExpiry([...path, 'requests']));
  found.push(...checkExactness(limit.requests, limit.burst, limit.per, path));
  return found;
}

/** Algorithms count in integer units of capacity × window ms, exact only below 2^53. */
function checkExactness(
  requests: number,
  burst: number | undefined,
  per: string,
  path: FieldPath,
): Finding[] {
  const windowMs = durationMs(per) ?? 0;
  const capacity = Math.max(requests, burst ?? 0);
  if (capacity * windowMs <= Number.MAX_SAFE_INTEGER) return [];
  return [
    {
      path: [...path, burst !== undefined && burst > requests ? 'burst' : 'requests'],
      message: `${capacity} per ${per} is too large to count exactly: limit × window in ms must stay below 2^53`,
    },
  ];
}

function zeroWithoutExpiry(path: FieldPath): Finding {
  return { path, message: 'a zero limit blocks every request; it needs an expires date' };
}

function checkKey(rule: ParsedRule, at: FieldPath): Finding[] {
  const key = rule.key ?? [];
  if (key.length === 0 && !rule.global) {
    return [
      {
        path: [...at, 'key'],
        message:
          'no key descriptors: list some (key: [api_key]), or set global: true for one counter shared by all',
      },
    ];
  }
  if (key.length > 0 && rule.global) {
    return [
      {
        path: [...at, 'global'],
        message: 'a global rule has one counter for everyone; remove key or global',
      },
    ];
  }
  return key.flatMap((name, index) =>
    key.indexOf(name) < index ? [{ path: [...at, 'key', index], message: `"${name}" is listed twice` }] : [],
  );
}

/**
 * A field of a rule as written, when it is text. Checks across rules read raw fields so that a rule with
 * other errors still takes part (its name exists; its overrides still dangle).
 */
export type TextField = (index: number) => string | undefined;

/** Duplicate names: reported at every later use, naming the first. */
export function checkDuplicateNames(count: number, nameOf: TextField): Finding[] {
  const first = new Map<string, number>();
  const found: Finding[] = [];
  for (let index = 0; index < count; index++) {
    const name = nameOf(index);
    if (name === undefined) continue;
    const earlier = first.get(name);
    if (earlier === undefined) first.set(name, index);
    else
      found.push({
        path: ['rules', index, 'name'],
        message: `duplicate rule name "${name}" (see rules[${earlier}])`,
      });
  }
  return found;
}

/** Overrides that point at themselves, at no rule, or round in a cycle. */
export function checkOverrides(count: number, nameOf: TextField, overridesOf: TextField): Finding[] {
  const indexByName = new Map<string, number>();
  for (let index = count - 1; index >= 0; index--) {
    const name = nameOf(index);
    if (name !== undefined) indexByName.set(name, index);
  }
  const names = [...indexByName.keys()];
  const found: Finding[] = [];
  for (let index = 0; index < count; index++) {
    const target = overridesOf(index);
    if (target === undefined) continue;
    const path = ['rules', index, 'overrides'];
    if (target === nameOf(index)) found.push({ path, message: 'a rule cannot override itself' });
    else if (!indexByName.has(target)) {
      const hint = closest(target, names);
      found.push({
        path,
        message: `no rule is named "${target}"${hint ? ` (did you mean "${hint}"?)` : ''}`,
      });
    } else {
      const cycle = overrideCycle(index, { nameOf, overridesOf, indexByName });
      if (cycle) found.push({ path, message: `override cycle: ${cycle.join(' -> ')}` });
    }
  }
  return found;
}

/** The names around the cycle starting at `start`, reported only from its first rule in file order. */
function overrideCycle(
  start: number,
  graph: { nameOf: TextField; overridesOf: TextField; indexByName: ReadonlyMap<string, number> },
): string[] | undefined {
  const { nameOf, overridesOf, indexByName } = graph;
  const seen: number[] = [start];
  let current = start;
  for (;;) {
    const target = overridesOf(current);
    const next = target === undefined ? undefined : indexByName.get(target);
    if (next === undefined || next === current) return undefined;
    if (next === start) break;
    if (seen.includes(next)) return undefined;
    seen.push(next);
    current = next;
  }
  if (Math.min(...seen) !== start) return undefined;
  return [...seen, start].map((index) => nameOf(index) ?? '?');
}

/** Things to tell the owner without refusing the file: overdue reviews, missing owners, rules already expired. */
export function warnRule(rule: ParsedRule, at: FieldPath, today: string): Finding[] {
  const found: Finding[] = [];
  if (rule.owner === undefined) found.push({ path: at, message: 'missing owner: say who reviews this rule' });
  if (rule.review !== undefined && rule.review < today) {
    found.push({ path: [...at, 'review'], message: `review overdue since ${rule.review}` });
  }
  const todayStart = dayStartMs(today) ?? 0;
  const expiresAt = rule.expires === undefined ? undefined : expiryMs(rule.expires);
  if (expiresAt !== undefined && expiresAt <= todayStart) {
    found.push({
      path: [...at, 'expires'],
      message: `expired on ${rule.expires}: the rule no longer applies`,
    });
  }
  return found;
}

/**
 * Match field names, which zod's record takes as any string: a blank or oversized name could never be a
 * descriptor, and zod drops a `__proto__` key, which would silently widen the rule. Each is refused.
 */
export function checkRawMatch(raw: unknown, at: FieldPath): Finding[] {
  const match = (raw as { match?: unknown } | null | undefined)?.match;
  if (match === null || typeof match !== 'object' || Array.isArray(match)) return [];
  const found: Finding[] = [];
  for (const field of Object.keys(match)) {
    const message = matchFieldProblem(field);
    if (message !== undefined) found.push({ path: [...at, 'match', field], message, atKey: true });
  }
  if (Object.hasOwn(match, '__proto__')) {
    found.push({
      path: [...at, 'match', '__proto__'],
      message: '"__proto__" cannot be a descriptor name',
      atKey: true,
    });
  }
  return found;
}

function matchFieldProblem(field: string): string | undefined {
  if (field.trim() === '') return `${show(field)} is not a descriptor name: name the descriptor to match`;
  if (field.length > MAX_NAME_LENGTH)
    return `the descriptor name must be at most ${MAX_NAME_LENGTH} characters, got ${field.length}`;
  return undefined;
}
