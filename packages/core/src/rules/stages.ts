import { durationMs } from '../base/duration.js';
import type { ChallengePolicy, CompiledRule } from './contract.js';
import type { FieldPath, Finding } from './findings.js';
import { jitterFraction, type ParsedRule } from './schema.js';

/*
 * Escalation stages of a rule: a warning before the limit (`warn_at`), the 429 at it, a proof-of-work
 * challenge after repeated violations (`challenge`), the ban after more (`ban`). The challenge reads the
 * violations the ban counts, so it needs one, and comes before it.
 */

/** Leading zero bits of a first challenge: about 65,000 hashes, tens of milliseconds in a browser. */
export const DEFAULT_DIFFICULTY = 16;
/** Requests a solved challenge lets through uncounted. */
export const DEFAULT_PASS_REQUESTS = 10;
/** How long a pass lasts. */
export const DEFAULT_PASS_MS = 60_000;

/** Meaning of `challenge`: it counts the ban's violations, and must come before the ban does. */
export function checkStages(rule: ParsedRule, at: FieldPath): Finding[] {
  const challenge = rule.challenge;
  if (challenge === undefined) return [];
  const path = [...at, 'challenge'];
  if (rule.ban === undefined)
    return [{ path, message: 'challenge counts violations as ban does: add ban: {after, within, for}' }];
  if (challenge.after >= rule.ban.after)
    return [
      {
        path: [...path, 'after'],
        message: `${challenge.after} is not below ban.after (${rule.ban.after}): the challenge comes before the ban`,
      },
    ];
  return [];
}

/** The compiled `warn_at` and `challenge` of a rule; empty when it has neither. */
export function compileStages(rule: ParsedRule): Pick<CompiledRule, 'warnAt' | 'challenge'> {
  const warnAt = rule.warn_at === undefined ? undefined : jitterFraction(rule.warn_at);
  return {
    ...(warnAt === undefined ? {} : { warnAt }),
    ...(rule.challenge === undefined ? {} : { challenge: challengePolicy(rule.challenge) }),
  };
}

function challengePolicy(spec: NonNullable<ParsedRule['challenge']>): ChallengePolicy {
  return {
    after: spec.after,
    difficulty: spec.difficulty ?? DEFAULT_DIFFICULTY,
    passRequests: spec.pass ?? DEFAULT_PASS_REQUESTS,
    passMs: spec.for === undefined ? DEFAULT_PASS_MS : (durationMs(spec.for) ?? DEFAULT_PASS_MS),
  };
}
