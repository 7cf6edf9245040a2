import { isIPv6 } from 'node:net';
import type { CompiledRules } from './contract.js';

/*
 * What a rule table (or the descriptors an app returns) shows that deserves a start-up notice: read from the
 * table alone, once per table; the HTTP layer's notices (http/notices.ts) say them.
 */

/** Rules of a table that deserve a notice, by name. */
export interface RuleSmells {
  /** Keyed by `api_key`: a client rotating random keys is a new counter each time unless keys are validated. */
  readonly apiKeyed: readonly string[];
  /** Matching a route template (`/users/:id`): never true where only paths are seen. */
  readonly templateMatched: readonly string[];
  /** Keyed by `route`: one counter per path where only paths are seen. */
  readonly routeKeyed: readonly string[];
}

/** Route template syntax (`:id`, `*splat`, `{/:opt}`, `(.*)`); a path has none of it. */
const TEMPLATE = /[:*{}()]/;

/** Rule smells by table: a table is immutable, so each is read once. */
const smellsByTable = new WeakMap<CompiledRules, RuleSmells>();

/** The smells of a rule table, worked out once per table. */
export function ruleSmells(rules: CompiledRules): RuleSmells {
  const known = smellsByTable.get(rules);
  if (known !== undefined) return known;
  const apiKeyed: string[] = [];
  const templateMatched: string[] = [];
  const routeKeyed: string[] = [];
  for (const rule of rules.rules) {
    if (rule.key.includes('api_key')) apiKeyed.push(rule.name);
    if (rule.key.includes('route')) routeKeyed.push(rule.name);
    const routes: unknown = rule.match.route;
    if (Array.isArray(routes) && routes.some((route) => typeof route === 'string' && TEMPLATE.test(route)))
      templateMatched.push(rule.name);
  }
  const smells: RuleSmells = { apiKeyed, templateMatched, routeKeyed };
  smellsByTable.set(rules, smells);
  return smells;
}

/** The name of the first of the app's descriptors whose value is a raw IPv6 address, if any. */
export function rawIpv6Descriptor(own: unknown): string | undefined {
  if (typeof own !== 'object' || own === null) return undefined;
  for (const [name, value] of Object.entries(own)) {
    if (typeof value === 'string' && value.includes(':') && isIPv6(value.trim())) return name;
  }
  return undefined;
}
