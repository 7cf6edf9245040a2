import { ConfigError } from '../base/errors.js';
import type { Maybe } from '../base/maybe.js';
import { isThenable } from '../base/maybe.js';
import { checkOptionNames } from '../base/optionNames.js';
import type { CheckOptions, Limiter } from '../engine/engine.js';
import type { HeaderValues } from '../fields/responses.js';
import { shownResult } from '../fields/shown.js';
import type { Decision } from '../observe/contract.js';
import type { RequestFacts } from '../request/facts.js';
import type { CompiledRule, CompiledRules, Descriptors } from '../rules/contract.js';
import { tagFor } from '../store/tags.js';
import { type SolutionRefusal, strayFault, tokenNonce, tokenRule, verifySolution } from './challenge.js';
import { issuePass, passRule, readPass } from './challengePass.js';
import { STAGE_HEADER, type StageObserver } from './stages.js';

/*
 * Redeeming a proof-of-work challenge (challenge.ts): a request bearing a solution, or the pass a solution
 * earned, is decided with its challenge rule left out and, in the same store call, a counter of its own: a
 * solution's replay marker (limit 1, keyed by the challenge's nonce) and the pass's budget (limit `pass`, for
 * `for`, keyed the same). A denial of either commits nothing, as any denial in a store call. Only limiters
 * given `challenge: {secret}` look for either, and only in requests that carry one.
 */

/** The `challenge` option of an adapter. */
export interface ChallengeOptions {
  /** HMAC secret signing challenges and passes; the same on every process sharing a store. */
  readonly secret: string;
  /** How long a challenge may be solved and sent back, ms. Default 60000. */
  readonly ttlMs?: number;
  /** A 429 at the challenge stage to a request accepting text/html is a page that solves it. Default true. */
  readonly page?: boolean;
}

/** The `challenge` option, checked, defaults filled in. */
export interface ChallengeSetup {
  readonly secret: string;
  readonly ttlMs: number;
  readonly page: boolean;
}

/** Still importable from here. */
export type { SolutionRefusal } from './challenge.js';

export const SOLUTION_HEADER = 'sluice-solution';
export const PASS_HEADER = 'sluice-pass';
export const SOLUTION_COOKIE = 'sluice_solution';
export const PASS_COOKIE = 'sluice_pass';
/** The descriptor the marker and pass counters are keyed by: the solved challenge's nonce. */
const NONCE_DESCRIPTOR = 'sluice_challenge';
const DEFAULT_TTL_MS = 60_000;
const OPTION_NAMES = ['secret', 'ttlMs', 'page'];

/** The `challenge` option at start-up, checked (ConfigError when wrong); undefined when not given. */
export function challengeSetup(given: unknown): ChallengeSetup | undefined {
  if (given === undefined) return undefined;
  if (typeof given !== 'object' || given === null)
    throw new ConfigError('challenge must be {secret, ttlMs?, page?}');
  checkOptionNames('challenge', given, OPTION_NAMES);
  const { secret, ttlMs, page } = given as Partial<ChallengeOptions>;
  if (typeof secret !== 'string' || secret.length < 16)
    throw new ConfigError(
      'challenge.secret must be a string of at least 16 characters (it signs challenges)',
    );
  if (ttlMs !== undefined && !(Number.isInteger(ttlMs) && ttlMs >= 1000))
    throw new ConfigError('challenge.ttlMs must be a whole number of ms, at least 1000');
  if (page !== undefined && typeof page !== 'boolean')
    throw new ConfigError('challenge.page must be true or false');
  return { secret, ttlMs: ttlMs ?? DEFAULT_TTL_MS, page: page ?? true };
}

/** A table with a `challenge` rule needs the secret to sign its challenges: refused at start without one. */
export function assertSecretGiven(table: CompiledRules, setup: ChallengeSetup | undefined): void {
  if (setup !== undefined) return;
  const rule = table.rules.find((r) => r.challenge !== undefined);
  if (rule !== undefined)
    throw new ConfigError(
      `rule ${rule.name} has challenge, which needs a secret to sign its challenges: give the option challenge: {secret}`,
    );
}

/** Rules of a table with `challenge`, by name; null when none has. */
const challengeRulesOf = new WeakMap<CompiledRules, ReadonlyMap<string, CompiledRule> | null>();

function challengeRules(table: CompiledRules): ReadonlyMap<string, CompiledRule> | null {
  let byName = challengeRulesOf.get(table);
  if (byName === undefined) {
    const found = table.rules.filter((rule) => rule.challenge !== undefined);
    byName = found.length === 0 ? null : new Map(found.map((rule) => [rule.name, rule]));
    challengeRulesOf.set(table, byName);
  }
  return byName;
}

/** The challenge rule named `name` in the tables of this check; undefined when none. */
export function challengeRule(
  name: string | undefined,
  tables: readonly (CompiledRules | undefined)[],
): CompiledRule | undefined {
  if (name === undefined) return undefined;
  for (const table of tables) {
    const rule = table === undefined ? undefined : challengeRules(table)?.get(name);
    if (rule !== undefined) return rule;
  }
  return undefined;
}

/** What a request brings: a solution or a pass, by header (a program) or cookie (a browser). */
interface Credential {
  readonly kind: 'solution' | 'pass';
  readonly value: string;
  readonly rule: CompiledRule;
  readonly cookie: boolean;
}

/** A solution header that names no challenge rule of the check, nor of another check of the request: refused. */
interface Stray {
  readonly kind: 'stray';
  readonly fault: 'malformed' | 'forged' | 'wrong_rule';
}

function headerText(facts: RequestFacts, name: string): string | undefined {
  const value = facts.header(name);
  return typeof value === 'string' ? value : value?.[0];
}

/** A cookie's value from the Cookie header; undefined when absent. */
export function cookieValue(facts: RequestFacts, name: string): string | undefined {
  const header = headerText(facts, 'cookie');
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}

/**
 * The credentials a request carries for challenge rules of this check, in the order they are tried: a solution
 * header (sent once, after a 429), a pass (header, then cookie), a solution cookie (the challenge page's, tried
 * when the pass beside it is used up). A solution header that is garbage, names no rule or fails the signature
 * comes first as a Stray, refused. Usually none: two header reads.
 */
function credentialsOf(
  context: RedeemContext,
  facts: RequestFacts,
  tables: readonly (CompiledRules | undefined)[],
): (Credential | Stray)[] {
  const solution = headerText(facts, SOLUTION_HEADER);
  const pass = headerText(facts, PASS_HEADER);
  const cookies = facts.header('cookie') !== undefined;
  // The usual request: nothing to look for, nothing made.
  if (solution === undefined && pass === undefined && !cookies) return NONE;
  const found: (Credential | Stray)[] = [];
  const add = (kind: Credential['kind'], value: string | undefined, cookie: boolean): void => {
    if (value === undefined) return;
    const name = kind === 'pass' ? passRule(value) : tokenRule(value.slice(0, value.lastIndexOf(':')));
    const rule = challengeRule(name, tables);
    if (rule !== undefined) found.push({ kind, value, rule, cookie });
    else if (kind === 'solution' && !cookie) {
      // A header is sent on purpose, once, after a 429: one that is no solution at all is answered, not
      // ignored (ignored, the request would be counted and its key take a violation). A cookie may be stale.
      const fault = strayReason(context, name, value);
      if (fault !== undefined) found.push({ kind: 'stray', fault });
    }
  };
  add('solution', solution?.trim(), false);
  add('pass', pass?.trim(), false);
  if (cookies) {
    add('pass', cookieValue(facts, PASS_COOKIE), true);
    add('solution', cookieValue(facts, SOLUTION_COOKIE), true);
  }
  return found;
}

const NONE: (Credential | Stray)[] = [];

/**
 * Why a solution header naming no challenge rule of this check is refused; undefined when it is for another check
 * of the same request (the global middleware sees a route rule's solution before the route's check redeems it).
 */
function strayReason(
  context: RedeemContext,
  name: string | undefined,
  solution: string,
): Stray['fault'] | undefined {
  const fault = strayFault(context.setup.secret, solution);
  if (fault !== undefined) return fault;
  // Signed here (so `name` is the server's): a rule the limiter no longer has (reloaded away) is refused.
  const elsewhere =
    challengeRule(name, [context.limiter.rules]) !== undefined || context.routeChallenges.has(name ?? '');
  return elsewhere ? undefined : 'wrong_rule';
}

/** Notes a route's challenge rules, compiled at start-up: a solution for one is not a stray in other checks. */
export function noteRouteRules(context: RedeemContext | undefined, table: CompiledRules): void {
  for (const rule of table.rules) if (rule.challenge !== undefined) context?.routeChallenges.add(rule.name);
}

/** What the request flow needs for a redemption. */
export interface RedeemContext {
  readonly setup: ChallengeSetup;
  readonly limiter: Limiter;
  readonly clock: () => number;
  readonly observer: StageObserver | undefined;
  /** The decision log's `info`, when on. */
  readonly log: ((entry: object) => void) | undefined;
  /** Names of the routes' challenge rules (noteRouteRules), filled as routes are compiled. */
  readonly routeChallenges: Set<string>;
}

/** How a redemption ends: a decision (with headers for its response), a refusal, or nothing to redeem after all. */
export type Redemption =
  | { readonly kind: 'decided'; readonly decision: Decision; readonly headers: HeaderValues | undefined }
  /** `rule` undefined: the solution named none (garbage, or not signed with this secret). */
  | { readonly kind: 'refused'; readonly rule: string | undefined; readonly reason: SolutionRefusal }
  /** Decided as usual; `headers` tell the client a pass it sent is over (it stops sending it). */
  | { readonly kind: 'plain'; readonly headers?: HeaderValues };

const PLAIN: Redemption = Object.freeze({ kind: 'plain' });

/**
 * Redeems the solution or pass the request carries, deciding it; undefined when it carries none for a rule of
 * this check (`global`: the limiter's table when the check counts it, `route`: the route's), the usual case:
 * two header reads. A refused solution sent in a header is refused; one in a cookie (a stale page's), and a
 * pass that is over or not this key's, leave the request to the usual decision.
 */
export function redeem(
  context: RedeemContext,
  facts: RequestFacts,
  descriptors: Descriptors,
  options: CheckOptions,
  global: CompiledRules | undefined,
  route: CompiledRules | undefined,
): Maybe<Redemption> | undefined {
  const credentials = credentialsOf(context, facts, [global, route]);
  if (credentials.length === 0) return undefined;
  const first = credentials[0]!;
  if (first.kind === 'stray') return refuse(context, undefined, first.fault, false);
  const tryFrom = (at: number): Maybe<Redemption> => {
    const credential = credentials[at]!;
    // Only the first can be a stray (a solution header is looked at first).
    if (credential.kind === 'stray') return PLAIN;
    const redeemed = redeemOne(context, credential, descriptors, options, global, route);
    // A pass used up, or not good here, leaves the next credential its turn (a page's new solution cookie).
    const next = (r: Redemption): Maybe<Redemption> =>
      r.kind === 'plain' && at + 1 < credentials.length ? tryFrom(at + 1) : r;
    return isThenable(redeemed) ? redeemed.then(next) : next(redeemed);
  };
  return tryFrom(0);
}

function redeemOne(
  context: RedeemContext,
  credential: Credential,
  descriptors: Descriptors,
  options: CheckOptions,
  global: CompiledRules | undefined,
  route: CompiledRules | undefined,
): Maybe<Redemption> {
  const { rule } = credential;
  const { secret } = context.setup;
  const keyHash = tagFor(rule, descriptors, secret);
  if (keyHash === undefined) return PLAIN;
  const now = context.clock();
  let nonce: string;
  if (credential.kind === 'solution') {
    const verdict = verifySolution(secret, credential.value, rule.name, keyHash, now);
    if (verdict !== 'ok') return refuse(context, rule.name, verdict, credential.cookie);
    nonce = tokenNonce(credential.value.slice(0, credential.value.lastIndexOf(':')));
  } else {
    const pass = readPass(secret, credential.value, keyHash, now);
    if (pass === undefined || pass.rule !== rule.name) return passOver(credential);
    nonce = pass.id;
  }
  const counters = countersOf(rule, context.setup, credential.kind);
  const table = passTable(global, route, rule, counters);
  let decided: Decision | Promise<Decision>;
  try {
    decided = context.limiter.decide(
      { ...descriptors, [NONCE_DESCRIPTOR]: nonce },
      { ...options, rules: table, global: false },
    );
  } catch {
    return PLAIN;
  }
  const settle = (decision: Decision): Redemption =>
    redeemed(context, credential, decision, counters, { keyHash, nonce, now, matched: table.matched });
  return isThenable(decided) ? decided.then(settle, () => PLAIN) : settle(decided);
}

/**
 * A refused solution: counted and logged with its reason; refused when sent in a header. `rule` undefined for
 * one that names none (counted under the rule label '', logged with `rule: null`: never the text it sent).
 */
function refuse(
  context: RedeemContext,
  rule: string | undefined,
  reason: SolutionRefusal,
  cookie: boolean,
): Redemption {
  try {
    context.observer?.onStage?.('refused', rule ?? '', reason);
  } catch {
    // An observer bug must not reach the request path.
  }
  context.log?.({
    event: 'challenge_refused',
    rule: rule ?? null,
    reason,
    carrier: cookie ? 'cookie' : 'header',
  });
  return cookie ? PLAIN : { kind: 'refused', rule, reason };
}

function redeemed(
  context: RedeemContext,
  credential: Credential,
  decision: Decision,
  counters: readonly CompiledRule[],
  seen: { keyHash: string; nonce: string; now: number; matched: boolean },
): Redemption {
  // The challenge rule does not apply to this request: nothing was redeemed, the decision is the usual one.
  if (!seen.matched) return { kind: 'decided', decision, headers: undefined };
  const [marker, budget] = credential.kind === 'solution' ? counters : [undefined, counters[0]];
  const deniedBy = (counter: CompiledRule | undefined) =>
    counter !== undefined && decision.results.some((r) => r.rule === counter.name && !r.allowed && !r.failed);
  if (deniedBy(marker)) return refuse(context, credential.rule.name, 'replayed', credential.cookie);
  // A pass used up: the rule counts this request again, as any other, and the client is told to drop it.
  if (deniedBy(budget)) return credential.kind === 'pass' ? passOver(credential) : PLAIN;
  const shown = withoutCounters(decision, counters);
  if (!shown.allowed || credential.kind === 'pass')
    return { kind: 'decided', decision: shown, headers: undefined };
  const rule = credential.rule;
  const passMs = rule.challenge!.passMs;
  const pass = issuePass(context.setup.secret, {
    rule: rule.name,
    keyHash: seen.keyHash,
    id: seen.nonce,
    until: seen.now + passMs,
  });
  try {
    context.observer?.onStage?.('solved', rule.name);
  } catch {
    // An observer bug must not reach the request path.
  }
  context.log?.({ event: 'challenge_solved', rule: rule.name });
  const headers: HeaderValues = {
    'Sluice-Pass': pass,
    [STAGE_HEADER]: `solved;rule="${rule.name}"`,
  };
  if (credential.cookie)
    headers['Set-Cookie'] =
      `${PASS_COOKIE}=${pass}; Path=/; Max-Age=${Math.ceil(passMs / 1000)}; HttpOnly; SameSite=Lax`;
  return { kind: 'decided', decision: shown, headers };
}

/**
 * The decision as its response shows it: the counters are the server's bookkeeping, not a quota. Shown as a
 * RateLimit policy, a spent marker (`api.solved`, r=0) or a used-up pass (`api.pass`, r=0) would tell a client
 * to wait for a reset, where its next request is only decided by the rule again (and, over it, challenged).
 * The response shows the other rules' numbers, or none.
 */
function withoutCounters(decision: Decision, counters: readonly CompiledRule[]): Decision {
  const isCounter = (name: string | undefined) => counters.some((counter) => counter.name === name);
  const results = decision.results.filter((result) => !isCounter(result.rule));
  if (!isCounter(decision.rule)) return { ...decision, results };
  const shown = shownResult(results);
  const limit = shown?.limit ?? Number.POSITIVE_INFINITY;
  return {
    ...decision,
    results,
    rule: shown?.rule,
    limit,
    remaining: shown?.remaining ?? limit,
    resetMs: shown?.resetMs ?? 0,
  };
}

/** Header telling a client that the pass it sent is used up or over: `Sluice-Pass-Over: ?1`. */
export const PASS_OVER_HEADER = 'Sluice-Pass-Over';
const OVER_HEADERS: HeaderValues = Object.freeze({ [PASS_OVER_HEADER]: '?1' });
const OVER_COOKIE: HeaderValues = Object.freeze({
  [PASS_OVER_HEADER]: '?1',
  'Set-Cookie': `${PASS_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax`,
});

/** Decided as usual, the pass sent dropped: the client stops sending it (a browser's cookie is cleared). */
function passOver(credential: Credential): Redemption {
  return { kind: 'plain', headers: credential.cookie ? OVER_COOKIE : OVER_HEADERS };
}

/** The counters of a redemption, made once per rule: [marker, budget] for a solution, [budget] for a pass. */
const solutionCounters = new WeakMap<CompiledRule, readonly CompiledRule[]>();
const passCounters = new WeakMap<CompiledRule, readonly CompiledRule[]>();

function countersOf(
  rule: CompiledRule,
  setup: ChallengeSetup,
  kind: Credential['kind'],
): readonly CompiledRule[] {
  const cache = kind === 'solution' ? solutionCounters : passCounters;
  let counters = cache.get(rule);
  if (counters === undefined) {
    const policy = rule.challenge!;
    const budget = counter(rule, 'pass', policy.passRequests, policy.passMs);
    // The marker outlives the challenge: a solution is refused as expired after that anyway.
    counters = kind === 'solution' ? [counter(rule, 'solved', 1, setup.ttlMs), budget] : [budget];
    cache.set(rule, counters);
  }
  return counters;
}

/**
 * A counter of a challenge rule's, opened by the first request that counts on it (first_request_window): named
 * `rule.suffix`, which no rule name can be, and keyed by the solved challenge's nonce.
 */
function counter(rule: CompiledRule, suffix: string, limit: number, windowMs: number): CompiledRule {
  return Object.freeze({
    name: `${rule.name}.${suffix}`,
    match: {},
    key: [NONCE_DESCRIPTOR],
    global: false,
    algorithm: 'first_request_window',
    params: { limit, windowMs, burst: limit },
    mode: 'enforce',
    rollout: 100,
    onStoreError: rule.onStoreError,
    scope: rule.scope,
  });
}

/** The check's rules with the challenge rule left out and the counters in its place (when it matches). */
function passTable(
  global: CompiledRules | undefined,
  route: CompiledRules | undefined,
  skipped: CompiledRule,
  counters: readonly CompiledRule[],
): CompiledRules & { matched: boolean } {
  const base = global ?? route!;
  const table = {
    domain: base.domain,
    version: base.version,
    rules: [],
    actions: global?.actions === true || route?.actions === true,
    adaptive: global?.adaptive === true || route?.adaptive === true,
    matched: false,
    match(descriptors: Descriptors, now: number, lists?: Parameters<CompiledRules['match']>[2]) {
      const matched = [
        ...(global?.match(descriptors, now, lists) ?? []),
        ...(route?.match(descriptors, now, lists) ?? []),
      ];
      const kept = matched.filter((rule) => rule !== skipped);
      table.matched = kept.length < matched.length;
      return table.matched ? [...kept, ...counters] : matched;
    },
  };
  return table;
}
