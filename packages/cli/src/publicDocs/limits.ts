/**
 * The public limits of a rules file, in the words an API's users read: who a limit applies to, on which routes,
 * counted per what, how much in what window, and what else happens (bans, rollouts, jitter, failing closed).
 * Rules marked `public: false`, shadow rules (they deny nobody) and deny/allow rules (they count nothing) stay out.
 */
import type { CompiledRule, CompiledRules, CostSpec, MatchCondition, RulesDocument } from '@sluice/core';
import { describeLimit } from '../commands/explain.js';
import { formatDuration } from '../rulesFile.js';

/** The routes (or methods) a limit applies to: all, only these, all but these, or those of a named list. */
export interface Scope {
  readonly only?: readonly string[];
  readonly except?: readonly string[];
  readonly list?: string;
}

/** One public limit. */
export interface PublicLimit {
  readonly rule: CompiledRule;
  /** Whom it applies to, from its match fields other than the route and method: `Everyone` when none. */
  readonly who: string;
  readonly routes: Scope;
  readonly methods: Scope;
  /** `per API key`, `per client IP address`, `shared by all clients`. */
  readonly per: string;
  /** `600 per 1m`, `2 concurrent (lease 1m)`. */
  readonly limit: string;
  /** The window in seconds (the lease, for concurrency); undefined for a calendar quota. */
  readonly windowSeconds: number | undefined;
  /** The window in words: `1m`, `1h`, `day` (UTC). */
  readonly window: string;
  /** Requests denied while the limiter cannot count get a 503 rather than pass. */
  readonly failsClosed: boolean;
  /** What else a client should know, one sentence each. */
  readonly notes: readonly string[];
}

const KEY_WORDS: Readonly<Record<string, string>> = {
  ip: 'client IP address',
  client_ip: 'client IP address',
  api_key: 'API key',
};

const AUTH_WORDS: Readonly<Record<string, string>> = {
  anonymous: 'Anonymous clients (no API key)',
  api_key: 'Clients with an API key',
};

/** `per API key`, `per tenant and user`, `shared by all clients`. */
function perText(rule: CompiledRule): string {
  if (rule.global || rule.key.length === 0) return 'shared by all clients';
  return `per ${rule.key.map((name) => KEY_WORDS[name] ?? name.replaceAll('_', ' ')).join(' and ')}`;
}

/** A scope from a match field's values and its condition. */
function scopeOf(values: readonly string[] | undefined, condition: MatchCondition | undefined): Scope {
  if (condition?.list !== undefined) return { list: condition.list };
  if (condition !== undefined)
    return condition.not ? { except: condition.values } : { only: condition.values };
  return values === undefined || values.length === 0 ? {} : { only: values };
}

/** `POST /login`, `every route`, `every route but /health`. */
export function scopeText(scope: Scope, all: string): string {
  if (scope.list !== undefined) return `those in the list ${scope.list}`;
  if (scope.except !== undefined) return `${all} but ${scope.except.join(', ')}`;
  return scope.only === undefined ? all : scope.only.join(', ');
}

/** Whom a rule applies to, from its match fields other than `route` and `method`. */
function whoOf(rule: CompiledRule): string {
  const parts: string[] = [];
  for (const [name, values] of Object.entries(rule.match)) {
    if (name === 'route' || name === 'method') continue;
    const auth = name === 'auth' && values.length === 1 ? AUTH_WORDS[values[0]!] : undefined;
    parts.push(auth ?? (values.length === 0 ? `with a ${name}` : `${name} ${values.join(' or ')}`));
  }
  for (const [name, condition] of Object.entries(rule.conditions ?? {})) {
    if (name === 'route' || name === 'method') continue;
    const scope = scopeText(scopeOf(undefined, condition), 'any');
    parts.push(`${name} ${scope}`);
  }
  if (parts.length === 0) return 'Everyone';
  const text = parts.join(', ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A rule's cost, when a request may count as more than one. */
function costNote(cost: CostSpec | undefined): string | undefined {
  if (cost === undefined || cost === 1) return undefined;
  if (typeof cost === 'number') return `Each request counts as ${cost}.`;
  if ('max' in cost) return `A request counts as its ${cost.descriptor} (at most ${cost.max}).`;
  const priced = Object.entries(cost.values).map(([value, units]) => `${value}: ${units}`);
  return `A request counts by its ${cost.by} (${priced.join(', ')}; otherwise ${cost.default}).`;
}

function notesOf(rule: CompiledRule, table: CompiledRules, hidden: ReadonlySet<string>): string[] {
  const notes: string[] = [];
  const { ban } = rule;
  if (ban !== undefined)
    notes.push(
      `After ${ban.after} refused requests within ${formatDuration(ban.withinMs)}, the key is blocked for ` +
        `${formatDuration(ban.forMs)}${ban.escalateMs ? ', longer each time it happens again' : ''}: ` +
        'the 429 then says "reason": "ban" and when it ends.',
    );
  const replaced = table.rules.find((r) => r.name === rule.overrides);
  if (replaced !== undefined && isPublic(replaced) && !hidden.has(replaced.name))
    notes.push(`Replaces ${rule.overrides} for these clients.`);
  if (rule.rollout < 100) notes.push(`Enforced for ${rule.rollout}% of keys while it is being rolled out.`);
  if (rule.retryJitter !== undefined)
    notes.push(`Retry-After is lengthened at random by up to ${Math.round(rule.retryJitter * 100)}%.`);
  if (rule.penalty !== undefined) notes.push(`A refused request still uses ${rule.penalty} of the limit.`);
  const cost = costNote(rule.cost);
  if (cost !== undefined) notes.push(cost);
  if (rule.onStoreError === 'deny') notes.push('Fails closed: 503 while the limiter cannot count.');
  return notes;
}

/** A rule users see: it limits (no deny or allow), is enforced, and is not marked `public: false`. */
function isPublic(rule: CompiledRule): boolean {
  return rule.action === undefined && rule.mode === 'enforce';
}

/** The rules a document marks `public: false` (an Envoy config has none). */
export function hiddenRules(document: RulesDocument | undefined): Set<string> {
  return new Set(document?.rules.filter((rule) => rule.public === false).map((rule) => rule.name));
}

/** The public limits of a table, in its order: `hidden` and rules that have expired at `now` left out. */
export function publicLimits(table: CompiledRules, hidden: ReadonlySet<string>, now: number): PublicLimit[] {
  return table.rules.flatMap((rule) => {
    if (hidden.has(rule.name) || !isPublic(rule)) return [];
    if (rule.expiresAt !== undefined && rule.expiresAt <= now) return [];
    const { windowMs, period } = rule.params;
    return [
      {
        rule,
        who: whoOf(rule),
        routes: scopeOf(rule.match.route, rule.conditions?.route),
        methods: scopeOf(rule.match.method, rule.conditions?.method),
        per: perText(rule),
        limit: describeLimit(rule),
        windowSeconds: period === undefined ? windowMs / 1000 : undefined,
        window: period ?? formatDuration(windowMs),
        failsClosed: rule.onStoreError === 'deny',
        notes: notesOf(rule, table, hidden),
      },
    ];
  });
}

/** The limits grouped by whom they apply to, `Everyone` first, each group in the file's order. */
export function byAudience(limits: readonly PublicLimit[]): [string, PublicLimit[]][] {
  const groups = new Map<string, PublicLimit[]>();
  for (const limit of limits) groups.set(limit.who, [...(groups.get(limit.who) ?? []), limit]);
  return [...groups.entries()].sort(([a], [b]) => Number(b === 'Everyone') - Number(a === 'Everyone'));
}
