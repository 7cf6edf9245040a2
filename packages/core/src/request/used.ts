import { ADDRESS_FIELDS } from '../net/address.js';
import type { CompiledRule, CompiledRules } from '../rules/contract.js';
import { IDEMPOTENCY_DESCRIPTOR } from '../store/tags.js';

/**
 * Descriptor names some rule of a table reads: in `match`, in `key`, in a `cost` taken from a descriptor, the
 * one naming a request's `priority` class, and `idempotency_key` for a rule with `idempotent`.
 */
export type UsedDescriptors = ReadonlySet<string>;

/**
 * What a rule that applies only to anonymous requests (`match: {auth: [anonymous]}`) records instead of `ip`
 * when it reads the client address: a request with an API key then has its address read only when some other
 * rule reads it (descriptors.ts). Not a descriptor name a rules file can write.
 */
export const ANONYMOUS_IP = 'ip (anonymous requests only)';

/** Names each table's rules read; worked out once per table. */
const usedByTable = new WeakMap<CompiledRules, UsedDescriptors>();

/**
 * The descriptors a table's rules read. An address condition on `ip` counts as reading `client_ip` too: a
 * range longer than the IPv6 subnet matches only against the whole address (see rules/conditions.ts).
 */
export function usedDescriptors(rules: CompiledRules): UsedDescriptors {
  let used = usedByTable.get(rules);
  if (used === undefined) {
    used = new Set(rules.rules.flatMap(namesRead));
    usedByTable.set(rules, used);
  }
  return used;
}

function namesRead(rule: CompiledRule): string[] {
  const names = [...Object.keys(rule.match), ...rule.key];
  if (anonymousOnly(rule))
    for (let i = 0; i < names.length; i++) if (names[i] === 'ip') names[i] = ANONYMOUS_IP;
  for (const field of Object.keys(rule.conditions ?? {})) {
    names.push(field);
    if (ADDRESS_FIELDS.has(field)) names.push('client_ip');
  }
  const cost = rule.cost;
  if (typeof cost === 'object') names.push('descriptor' in cost ? cost.descriptor : cost.by);
  if (rule.idempotentMs !== undefined) names.push(IDEMPOTENCY_DESCRIPTOR);
  if (rule.priority?.descriptor !== undefined) names.push(rule.priority.descriptor);
  return names;
}

function anonymousOnly(rule: CompiledRule): boolean {
  const auth = rule.match.auth;
  return auth !== undefined && auth.length === 1 && auth[0] === 'anonymous';
}

/** Unions made so far, by route table's names then the limiter's: made once per pair of tables. */
const unions = new WeakMap<UsedDescriptors, WeakMap<UsedDescriptors, UsedDescriptors>>();

/** The names read by either table (the limiter's own, a route's); `route` undefined: the first alone. */
export function usedByBoth(global: UsedDescriptors, route: UsedDescriptors | undefined): UsedDescriptors {
  if (route === undefined || route === global || route.size === 0) return global;
  if (global.size === 0) return route;
  let byGlobal = unions.get(route);
  if (byGlobal === undefined) {
    byGlobal = new WeakMap();
    unions.set(route, byGlobal);
  }
  let union = byGlobal.get(global);
  if (union === undefined) {
    union = new Set([...global, ...route]);
    byGlobal.set(global, union);
  }
  return union;
}
