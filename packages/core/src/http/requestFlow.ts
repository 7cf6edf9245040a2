import { isThenable, type Maybe } from '../base/maybe.js';
import type { CheckOptions, Limiter } from '../engine/engine.js';
import type { Escalation, ResponseMarks } from '../escalation/index.js';
import { retryJitterOf } from '../fields/jitter.js';
import type { HeaderNames } from '../fields/responses.js';
import { shownResult } from '../fields/shown.js';
import type { Decision, RuleResult } from '../observe/contract.js';
import { buildDescriptors, type DescriptorSettings, headerApiKey } from '../request/descriptors.js';
import type { RequestFacts } from '../request/facts.js';
import { type UsedDescriptors, usedByBoth, usedDescriptors } from '../request/used.js';
import type { CompiledRules, Descriptors } from '../rules/contract.js';
import { type AdapterReport, runHook, validCost } from './hooks.js';
import { rateLimitInfo } from './info.js';
import { ALL_RULES, type CheckScope, type RequestNotes, remainingScope } from './notes.js';
import type { NoticeWatch } from './notices.js';
import type { AdapterStage, ResolvedOptions } from './options.js';
import { withSettle } from './settle.js';
import { allowVerdict, denyVerdict, type Verdict } from './verdict.js';

/**
 * What a request's way through the HTTP layer reads, built once by `createHttpLimiter`; only `usedTable` and
 * `usedGlobal` change (when the limiter's table is reloaded). A plain object, so each step below is a function
 * of it that a test can call alone.
 */
export interface RequestFlow<Req> {
  readonly options: ResolvedOptions<Req>;
  readonly limiter: Limiter;
  readonly notices: NoticeWatch;
  /** How descriptors are built: the options' part for them (settings.ts). */
  readonly descriptors: DescriptorSettings;
  readonly report: AdapterReport;
  readonly clock: () => number;
  /** This limiter's notes on a request (see notes.ts). */
  readonly notesFor: (req: Req) => RequestNotes | undefined;
  /** Keys read from the header unchecked (no `apiKey` nor `validateApiKey`). */
  readonly rawKeys: boolean;
  /** Built-in descriptors no rule reads are left out (no decision log, no observer reading descriptors). */
  readonly onlyUsed: boolean;
  /** The adapter checks each request once, global and route rules together: nothing noted. */
  readonly checksOnce: boolean;
  /** The names an allowed response's rate-limit fields get (see AdapterTraits.lowerCaseHeaders). */
  readonly headerNames: HeaderNames;
  /** Hooks first or not, chosen once from the options: a request pays only for the hooks the app gave. */
  readonly decide: (
    flow: RequestFlow<Req>,
    req: Req,
    facts: RequestFacts,
    scope: CheckScope,
  ) => Maybe<Verdict>;
  /** The table whose descriptor names `usedGlobal` holds: looked up again only on a reload. */
  usedTable: CompiledRules | undefined;
  usedGlobal: UsedDescriptors;
  /** Stages and challenges (escalation/): `redeem` before the engine, `respond` on its decision. */
  readonly escalation: Escalation;
}

const SKIP: Verdict = Object.freeze({ action: 'skip' });
const NO_OPTIONS: CheckOptions = Object.freeze({});

/** `next(value)`, at once when the value is there, after it resolves when it is a promise or any thenable. */
function then<T, U>(value: Maybe<T>, next: (value: T) => Maybe<U>): Maybe<U> {
  return isThenable(value) ? value.then(next) : next(value);
}

/** An app's hook called with the request; no closure is made for the call. */
function hook<T, Req>(
  flow: Pick<RequestFlow<unknown>, 'report'>,
  stage: AdapterStage,
  call: (req: Req) => T | Promise<T>,
  req: Req,
): Maybe<T | undefined> {
  return runHook(flow.report, stage, call, req);
}

/** Decides one request: what is left to check of it, the `skip` hook, then the decision; never throws. */
export function checkRequest<Req>(
  flow: RequestFlow<Req>,
  req: Req,
  facts: RequestFacts,
  requested: CheckScope,
): Maybe<Verdict> {
  const scope = flow.checksOnce ? requested : remainingScope(flow.notesFor(req), requested);
  flow.notices.request(facts, scope === undefined || scope.global === false ? undefined : flow.limiter.rules);
  if (scope === undefined) return SKIP;
  const { skip } = flow.options;
  const verdict = skip
    ? then(hook(flow, 'skip', skip, req), (skipped) =>
        skipped === true ? SKIP : flow.decide(flow, req, facts, scope),
      )
    : flow.decide(flow, req, facts, scope);
  // A user hook may return any thenable: adapters get a verdict or a native promise, nothing else.
  return isThenable(verdict) && !(verdict instanceof Promise) ? Promise.resolve(verdict) : verdict;
}

/**
 * Hooks in order (api key and its validation, descriptors, cost), then the engine; the verdict. Each step
 * goes on to the next at once when its hook answered at once: a continuation only after a promise.
 */
export function decideWithHooks<Req>(
  flow: RequestFlow<Req>,
  req: Req,
  facts: RequestFacts,
  scope: CheckScope,
): Maybe<Verdict> {
  const key = apiKeyOf(flow, req, facts);
  if (isThenable(key)) return then(key, (value) => withApiKey(flow, req, facts, scope, value));
  return withApiKey(flow, req, facts, scope, key);
}

/** The `descriptors` hook's step, the API key known. */
function withApiKey<Req>(
  flow: RequestFlow<Req>,
  req: Req,
  facts: RequestFacts,
  scope: CheckScope,
  apiKey: unknown,
): Maybe<Verdict> {
  const { descriptors } = flow.options;
  const own = descriptors ? hook(flow, 'descriptors', descriptors, req) : undefined;
  if (isThenable(own)) return then(own, (value) => withOwn(flow, req, facts, scope, apiKey, value));
  return withOwn(flow, req, facts, scope, apiKey, own);
}

/** The `cost` hook's step, the app's own descriptors known. */
function withOwn<Req>(
  flow: RequestFlow<Req>,
  req: Req,
  facts: RequestFacts,
  scope: CheckScope,
  apiKey: unknown,
  own: unknown,
): Maybe<Verdict> {
  flow.notices.descriptors(own);
  const extra = flow.rawKeys ? { descriptors: own } : { apiKey, descriptors: own };
  const { cost } = flow.options;
  const costOf = cost ? hook(flow, 'cost', cost, req) : undefined;
  if (isThenable(costOf)) return then(costOf, (value) => withCost(flow, req, facts, scope, extra, value));
  return withCost(flow, req, facts, scope, extra, costOf);
}

/** The engine's step, every hook answered. */
function withCost<Req>(
  flow: RequestFlow<Req>,
  req: Req,
  facts: RequestFacts,
  scope: CheckScope,
  extra: { readonly apiKey?: unknown; readonly descriptors: unknown },
  cost: number | undefined,
): Maybe<Verdict> {
  if (flow.options.cost !== undefined) flow.notices.cost(cost, facts, scope);
  const built = buildDescriptors(facts, flow.descriptors, extra, usedBy(flow, scope), flow.onlyUsed);
  return judge(flow, req, facts, built, cost, scope);
}

/** No hook configured (no API key reader or validator, no descriptors, no cost): no continuation at all. */
export function decideWithoutHooks<Req>(
  flow: RequestFlow<Req>,
  req: Req,
  facts: RequestFacts,
  scope: CheckScope,
): Maybe<Verdict> {
  const built = buildDescriptors(facts, flow.descriptors, undefined, usedBy(flow, scope), flow.onlyUsed);
  // Without `challenge` (the usual setup) the engine is next: no cost to check, no solution to look for.
  if (!flow.escalation.redeems)
    return decideNow(flow, req, facts, built, checkOptionsOf(undefined, scope), scope);
  return judge(flow, req, facts, built, undefined, scope);
}

/** The engine's options of a check: none at all for the limiter's own rules at the code's cost. */
function checkOptionsOf(cost: number | undefined, scope: CheckScope): CheckOptions {
  return cost === undefined && scope.rules === undefined && scope.global !== false
    ? NO_OPTIONS
    : { cost, rules: scope.rules, global: scope.global };
}

/** The descriptor names the rules of this check read (the limiter's own and the route's). */
export function usedBy<Req>(flow: RequestFlow<Req>, scope: CheckScope): UsedDescriptors {
  const table = flow.limiter.rules;
  if (table !== flow.usedTable) {
    flow.usedTable = table;
    flow.usedGlobal = usedDescriptors(table);
  }
  const { usedGlobal } = flow;
  return scope.rules === undefined ? usedGlobal : usedByBoth(usedGlobal, usedDescriptors(scope.rules));
}

/** True when a rule of the current global table reads `route` (asked per request: a reload takes effect). */
export function readsRoute<Req>(flow: RequestFlow<Req>): boolean {
  return usedBy(flow, ALL_RULES).has('route');
}

/**
 * The request's API key when the app reads or validates it (`apiKey`, `validateApiKey`); undefined when
 * there is none or the validator refused it (so the request is anonymous). Read from the header by
 * buildDescriptors otherwise.
 */
function apiKeyOf<Req>(flow: RequestFlow<Req>, req: Req, facts: RequestFacts): Maybe<unknown> {
  const { apiKey, validateApiKey } = flow.options;
  if (flow.rawKeys) return undefined;
  const key = apiKey ? hook(flow, 'api_key', apiKey, req) : headerApiKey(facts, flow.descriptors);
  if (validateApiKey === undefined) return key;
  return then(key, (value) => {
    if (typeof value !== 'string' || value === '') return undefined;
    const notes = flow.notesFor(req);
    const judged = notes?.judgedKey;
    if (judged !== undefined && judged.key === value) return judged.valid ? value : undefined;
    // A validator that throws refuses the key: failing towards the per-IP rules is the safe side.
    const valid = hook(flow, 'validate_api_key', (r: Req) => validateApiKey(value, r), req);
    return then(valid, (ok) => {
      if (notes !== undefined) notes.judgedKey = { key: value, valid: ok === true };
      return ok === true ? value : undefined;
    });
  });
}

/** The engine's decision on the built descriptors; a limiter failure lets the request through, reported. */
function judge<Req>(
  flow: RequestFlow<Req>,
  req: Req,
  facts: RequestFacts,
  descriptors: Descriptors,
  cost: number | undefined,
  scope: CheckScope,
): Maybe<Verdict> {
  const checkOptions = checkOptionsOf(validCost(flow.report, cost), scope);
  // Only limiters given `challenge` look for a solution or a pass.
  if (flow.escalation.redeems) {
    const global = scope.global === false ? undefined : flow.limiter.rules;
    const redeemed = flow.escalation.redeem(facts, descriptors, checkOptions, global, scope.rules);
    if (redeemed !== undefined)
      return then(redeemed, (r) => {
        if (r.kind === 'refused')
          return { action: 'deny', denied: r.denied, info: rateLimitInfo(r.denied.decision, undefined) };
        if (r.kind === 'plain') {
          const plain = decideNow(flow, req, facts, descriptors, checkOptions, scope);
          return r.headers === undefined ? plain : then(plain, (verdict) => withMarks(verdict, r.headers));
        }
        return withMarks(verdictOf(flow, req, facts, descriptors, r.decision, scope), r.headers);
      });
  }
  return decideNow(flow, req, facts, descriptors, checkOptions, scope);
}

/**
 * The verdict with escalation's marks on its response (a stage, a challenge, a pass earned or over): headers
 * on any, and a denial's body fields and page.
 */
function withMarks(verdict: Verdict, marks: ResponseMarks | undefined): Verdict {
  if (marks === undefined || verdict.action === 'skip') return verdict;
  if (verdict.action === 'allow') {
    Object.assign(verdict.headers, marks.headers);
    return verdict;
  }
  const { denied } = verdict;
  const headers = { ...denied.headers, ...marks.headers };
  const body = marks.body === undefined ? denied.body : { ...denied.body, ...marks.body };
  const html = marks.html === undefined ? {} : { html: marks.html };
  return { ...verdict, denied: { ...denied, headers, body, ...html } };
}

function decideNow<Req>(
  flow: RequestFlow<Req>,
  req: Req,
  facts: RequestFacts,
  descriptors: Descriptors,
  checkOptions: CheckOptions,
  scope: CheckScope,
): Maybe<Verdict> {
  let decision: Decision | Promise<Decision>;
  try {
    decision = flow.limiter.decide(descriptors, checkOptions);
  } catch (error) {
    flow.report(error, 'check');
    return SKIP;
  }
  if (!isThenable(decision)) return verdictOf(flow, req, facts, descriptors, decision, scope);
  return decision.then(
    (settled) => verdictOf(flow, req, facts, descriptors, settled, scope),
    (error: unknown) => {
      flow.report(error, 'check');
      return SKIP;
    },
  );
}

function verdictOf<Req>(
  flow: RequestFlow<Req>,
  req: Req,
  facts: RequestFacts,
  descriptors: Descriptors,
  decision: Decision,
  scope: CheckScope,
): Verdict {
  const verdict = plainVerdictOf(flow, req, decision, scope);
  // Tables without stages (the usual case) get no marks: the verdict answers as it is.
  return withMarks(verdict, flow.escalation.respond(decision, scope.rules, descriptors, facts));
}

function plainVerdictOf<Req>(
  flow: RequestFlow<Req>,
  req: Req,
  decision: Decision,
  scope: CheckScope,
): Verdict {
  const { options, clock, limiter } = flow;
  if (!decision.allowed) {
    const jitter = retryJitterOf(decision, limiter.rules, scope.rules);
    return denyVerdict(decision, options.headers, clock, jitter);
  }
  const shown = shownFor(flow, req, decision);
  const allowed = allowVerdict(
    decision,
    shown,
    options.headers,
    clock,
    limiter,
    flow.report,
    flow.headerNames,
  );
  return withSettle(allowed, limiter, options.settleHeader);
}

/**
 * The rule an allowed response's headers show. Global and route checks run apart where the global middleware runs
 * before the router: the most constrained of both, chosen as in one call, so every adapter shows the same rule.
 */
function shownFor<Req>(flow: RequestFlow<Req>, req: Req, decision: Decision): RuleResult | undefined {
  if (flow.checksOnce) return shownResult(decision.results, undefined);
  const notes = flow.notesFor(req);
  const shown = shownResult(decision.results, notes?.shown);
  if (notes !== undefined) notes.shown = shown;
  return shown;
}
