import { isThenable, type Maybe } from '../base/maybe.js';
import type { CheckOptions, Limiter } from '../engine/engine.js';
import type { DeniedResponse } from '../fields/responses.js';
import type { Decision } from '../observe/contract.js';
import type { RequestFacts } from '../request/facts.js';
import type { CompiledRules, Descriptors } from '../rules/contract.js';
import {
  assertSecretGiven,
  type ChallengeSetup,
  challengeRule,
  noteRouteRules,
  type RedeemContext,
  type Redemption,
  redeem,
} from './challengeFlow.js';
import { challengeMarks, refusedResponse } from './challengeResponse.js';
import {
  hasStages,
  type ResponseMarks,
  type StageLog,
  type StageObserver,
  stageMarks,
  stageOf,
} from './stages.js';

/*
 * Escalation, a layer above the engine: a rule's stages (`warn_at`, `challenge`, `ban`) and the proof-of-work
 * challenge with its pass. The request flow reaches it through the one object below, built once: `redeem`
 * before the engine's check, `respond` on its decision. This file is the room's only door.
 */

export {
  CHALLENGE_ALGORITHM,
  type Challenge,
  issueChallenge,
  type SolutionVerdict,
  solveChallenge,
  verifySolution,
} from './challenge.js';
export {
  type ChallengeOptions,
  type ChallengeSetup,
  challengeSetup,
  PASS_COOKIE,
  PASS_HEADER,
  SOLUTION_COOKIE,
  SOLUTION_HEADER,
  type SolutionRefusal,
} from './challengeFlow.js';
export { CHALLENGE_HEADER, challengeHeader } from './challengeResponse.js';
export type { EscalationStage, ResponseMarks, StageLog, StageObserver } from './stages.js';

/** What escalation is built from, once: the checked `challenge` option and where stages are told. */
export interface EscalationSettings {
  /** The `challenge` option, checked; undefined: no request is looked at for a solution or a pass. */
  readonly challenge: ChallengeSetup | undefined;
  readonly limiter: Limiter;
  readonly clock: () => number;
  readonly observer: StageObserver | undefined;
  /** The decision log's `info`, when on: warnings, solutions and refusals get a line. */
  readonly log: StageLog;
}

/** How a redemption ends: a decision (with headers for its response), a refusal, or the usual decision. */
export type Redeemed =
  | { readonly kind: 'decided'; readonly decision: Decision; readonly headers: ResponseMarks | undefined }
  /** A solution refused: the 403 to send; nothing was counted. */
  | { readonly kind: 'refused'; readonly denied: DeniedResponse }
  /** Decide as usual; `headers` tell the client a pass it sent is over (it stops sending it). */
  | { readonly kind: 'plain'; readonly headers: ResponseMarks | undefined };

/** The request flow's one way in. */
export interface Escalation {
  /** True when the limiter was given `challenge`: only then may a request carry something to redeem. */
  readonly redeems: boolean;
  /**
   * Redeems the solution or pass a request carries, deciding it; undefined when it carries none for a rule of
   * this check (the usual case). `global`: the limiter's table when the check counts it; `route`: the route's.
   */
  redeem(
    facts: RequestFacts,
    descriptors: Descriptors,
    options: CheckOptions,
    global: CompiledRules | undefined,
    route: CompiledRules | undefined,
  ): Maybe<Redeemed> | undefined;
  /**
   * What a decision's response gains from its stage (the `Sluice-Stage` header; at the challenge stage the
   * challenge, and a page for a browser); undefined for tables without stages (the usual case).
   */
  respond(
    decision: Decision,
    route: CompiledRules | undefined,
    descriptors: Descriptors,
    facts: RequestFacts,
  ): ResponseMarks | undefined;
  /** A route's rules, compiled at start-up: a challenge rule needs the secret (ConfigError without one). */
  noteRoute(table: CompiledRules): void;
}

/** Escalation for one limiter; a ConfigError when a rule has `challenge` and no secret is given. */
export function createEscalation(settings: EscalationSettings): Escalation {
  const { challenge, limiter, observer, log } = settings;
  assertSecretGiven(limiter.rules, challenge);
  const context: RedeemContext | undefined =
    challenge === undefined
      ? undefined
      : { setup: challenge, limiter, clock: settings.clock, observer, log, routeChallenges: new Set() };
  return {
    redeems: context !== undefined,
    redeem(facts, descriptors, options, global, route) {
      if (context === undefined) return undefined;
      const redeemed = redeem(context, facts, descriptors, options, global, route);
      if (redeemed === undefined) return undefined;
      return isThenable(redeemed) ? redeemed.then(asRedeemed) : asRedeemed(redeemed);
    },
    respond(decision, route, descriptors, facts) {
      // Tables without stages (the usual case): nothing to add, nothing made.
      if (!hasStages(limiter.rules) && !hasStages(route)) return undefined;
      const tables = [limiter.rules, route];
      const stage = stageOf(decision, tables);
      if (stage === undefined) return undefined;
      const marks = stageMarks(stage, log, observer);
      if (stage.stage !== 'challenge' || challenge === undefined) return marks;
      const rule = challengeRule(stage.rule, tables);
      const more =
        rule === undefined
          ? undefined
          : challengeMarks(challenge, rule, stage.violations ?? 0, descriptors, facts, settings.clock());
      return more === undefined ? marks : joinMarks(marks, more);
    },
    noteRoute(table) {
      assertSecretGiven(table, challenge);
      noteRouteRules(context, table);
    },
  };

  function asRedeemed(r: Redemption): Redeemed {
    if (r.kind === 'refused')
      return { kind: 'refused', denied: refusedResponse(r.rule, r.reason, limiter.version) };
    const headers = r.headers === undefined ? undefined : { headers: r.headers };
    return r.kind === 'plain'
      ? { kind: 'plain', headers }
      : { kind: 'decided', decision: r.decision, headers };
  }
}

/** Two sets of marks as one: the second's fields after the first's. */
function joinMarks(first: ResponseMarks, second: ResponseMarks): ResponseMarks {
  const joined = {
    headers: { ...first.headers, ...second.headers },
    body: { ...first.body, ...second.body },
  };
  return second.html === undefined ? joined : { ...joined, html: second.html };
}
