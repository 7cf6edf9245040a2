import type { DeniedResponse } from '../fields/responses.js';
import type { Decision } from '../observe/contract.js';
import type { RequestFacts } from '../request/facts.js';
import type { CompiledRule, Descriptors } from '../rules/contract.js';
import { tagFor } from '../store/tags.js';
import { type Challenge, difficultyFor, issueChallenge } from './challenge.js';
import type { ChallengeSetup, SolutionRefusal } from './challengeFlow.js';
import { challengePage } from './challengePage.js';
import type { ResponseMarks } from './stages.js';

/** Header of a 429 at the challenge stage: `"<token>";alg=sha256-leading-zero-bits;difficulty=18;expires=<unix s>`. */
export const CHALLENGE_HEADER = 'Sluice-Challenge';

/** The RFC 9651 item of a challenge (the token is a string: its characters need no escaping). */
export function challengeHeader(challenge: Challenge): string {
  const expires = Math.floor(challenge.expiresAt / 1000);
  return `"${challenge.token}";alg=${challenge.algorithm};difficulty=${challenge.difficulty};expires=${expires}`;
}

/**
 * What the 429 of the challenge stage gains: the challenge's header, the body's `challenge`, and for a request
 * that accepts text/html a page that solves it; undefined when the rule keys this request by nothing. Bound
 * to the key's hash under the secret (never the key).
 */
export function challengeMarks(
  setup: ChallengeSetup,
  rule: CompiledRule,
  violations: number,
  descriptors: Descriptors,
  facts: RequestFacts,
  now: number,
): ResponseMarks | undefined {
  if (rule.challenge === undefined) return undefined;
  const keyHash = tagFor(rule, descriptors, setup.secret);
  if (keyHash === undefined) return undefined;
  const policy = rule.challenge;
  const difficulty = difficultyFor(policy.difficulty, policy.after, violations);
  const challenge = issueChallenge(setup.secret, rule.name, keyHash, difficulty, now, setup.ttlMs);
  const body = {
    challenge: {
      algorithm: challenge.algorithm,
      difficulty: challenge.difficulty,
      token: challenge.token,
      expiresAt: new Date(challenge.expiresAt).toISOString(),
    },
  };
  const headers = { [CHALLENGE_HEADER]: challengeHeader(challenge) };
  const html = setup.page && acceptsHtml(facts) ? challengePage(challenge, rule.name) : undefined;
  return html === undefined ? { headers, body } : { headers, body, html };
}

/** A browser's navigation: its Accept names text/html (a fetch or API client's does not). */
function acceptsHtml(facts: RequestFacts): boolean {
  const accept = facts.header('accept');
  const text = typeof accept === 'string' ? accept : accept?.join(',');
  return text?.includes('text/html') === true;
}

/**
 * A solution refused (sent in a header): 403, with the reason; nothing was counted. `rule` undefined for a
 * solution that names none (garbage, or not signed with this secret): the body's `rule` is null.
 */
export function refusedResponse(
  rule: string | undefined,
  reason: SolutionRefusal,
  version: string,
): DeniedResponse {
  const decision: Decision = {
    allowed: false,
    rule,
    retryAfterMs: Number.POSITIVE_INFINITY,
    delayMs: 0,
    limit: 0,
    remaining: 0,
    resetMs: 0,
    failedOpen: false,
    reason: 'deny',
    results: [],
    leases: [],
    version,
    action: 'deny',
  };
  return {
    status: 403,
    headers:
      rule === undefined
        ? { 'Cache-Control': 'no-store' }
        : { 'Cache-Control': 'no-store', 'X-RateLimit-Rule': rule },
    body: { error: 'forbidden', rule: rule ?? null, retryAfter: null, refused: reason },
    decision,
  };
}
