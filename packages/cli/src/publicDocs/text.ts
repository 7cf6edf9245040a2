/**
 * The limits page's words, shared by its Markdown and HTML forms: the table's rows and the paragraphs. Each form
 * only marks them up.
 */

import { byAudience, type PublicLimit, scopeText } from './limits.js';
import { type FieldMeaning, headerOf, type LimitsPage } from './page.js';

/** The columns of a limits table. */
export const LIMIT_COLUMNS = ['Routes', 'Methods', 'Limit', 'Counted', 'Policy header', 'Notes'] as const;

/** A limit's cells, in LIMIT_COLUMNS' order (the policy as the limiter sends it, or `-`). */
export function limitCells(page: LimitsPage, limit: PublicLimit): string[] {
  const sample = page.samples.get(limit.rule.name);
  const policy = sample === undefined ? undefined : headerOf(sample.allowed, 'RateLimit-Policy');
  return [
    scopeText(limit.routes, 'every route'),
    scopeText(limit.methods, 'every method'),
    limit.limit,
    limit.per,
    policy ?? '-',
    limit.notes.join(' ') || '-',
  ];
}

/** The sections of limits, one per audience. */
export function audiences(page: LimitsPage): [string, PublicLimit[]][] {
  return byAudience(page.limits);
}

export const title = (page: LimitsPage): string => `Rate limits: ${page.domain}`;

export const intro = (page: LimitsPage): string =>
  `These are the rate limits of this API (rules ${page.domain}, version ${page.version}). ` +
  'A request may fall under several limits at once; each is counted, and the first used up refuses it. ' +
  'The headers of every response say which limit is closest to running out and how much of it is left.';

export const NONE_PUBLIC = 'No limit of these rules is public.';

export const fieldsIntro =
  'Responses within a limit carry the fields of the limit closest to running out; refusals carry the refusing limit\u2019s, and when to try again.';

/** The field meanings as rows. */
export const fieldRows = (fields: readonly FieldMeaning[]): string[][] =>
  fields.map((f) => [f.name, f.meaning]);

export function allowedIntro(limit: PublicLimit): string {
  return `A response within a limit (${limit.rule.name}, ${limit.limit} ${limit.per}, all of it used by this request):`;
}

export function deniedIntro(limit: PublicLimit): string {
  return (
    `When a limit is used up, requests are refused with 429 until it has room again. The body says which ` +
    `limit refused (\`rule\`) and how many seconds to wait (\`retryAfter\`, as in Retry-After); a blocked key's ` +
    `also says \`"reason": "ban"\` and \`bannedUntil\`. The next request of ${limit.rule.name} after the one above:`
  );
}

export function unavailableIntro(page: LimitsPage, limit: PublicLimit): string {
  const closed = page.limits.filter((l) => l.failsClosed).map((l) => l.rule.name);
  const which =
    closed.length === 0
      ? 'None of these limits does: when the limiter cannot count, their requests pass. Should one, its 503 looks like this'
      : `These limits do: ${closed.join(', ')}. ${limit.rule.name}'s, while the limiter cannot count`;
  return (
    'A limit that fails closed refuses requests with 503 while the limiter cannot count them (its store is ' +
    `unreachable): retry later, as after a 429. ${which}:`
  );
}

export const BACKOFF_INTRO =
  'Retry only on 429 and 503, never at once: wait the seconds Retry-After gives (when it is missing, wait longer ' +
  'each time), and add a random share on top, so that clients refused together do not all come back together.';
