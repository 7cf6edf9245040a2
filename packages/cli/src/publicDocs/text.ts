/**
 * The limits page's words, shared by its Markdown and HTML forms: its blocks in order (headings, paragraphs, the
 * tables' rows, the sample responses and examples), built once. Each form only marks them up.
 */

import { httpText } from './examples.js';
import { byAudience, type PublicLimit, scopeText } from './limits.js';
import { headerOf, type LimitsPage } from './page.js';

/** The columns of a limits table. */
export const LIMIT_COLUMNS = ['Routes', 'Methods', 'Limit', 'Counted', 'Policy header', 'Notes'] as const;

/** The column of a limit's RateLimit-Policy: a header's value, shown as code (unless `-`). */
export const POLICY_COLUMN = LIMIT_COLUMNS.indexOf('Policy header');

/** A limit's cells, in LIMIT_COLUMNS' order (the policy as the limiter sends it, or `-`). */
function limitCells(page: LimitsPage, limit: PublicLimit): string[] {
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

/** The page's title (the HTML page's <title> too). */
export const title = (page: LimitsPage): string => `Rate limits: ${page.domain}`;

const intro = (page: LimitsPage): string =>
  `These are the rate limits of this API (rules ${page.domain}, version ${page.version}). ` +
  'A request may fall under several limits at once; each is counted, and the first used up refuses it. ' +
  'The headers of every response say which limit is closest to running out and how much of it is left.';

const NONE_PUBLIC = 'No limit of these rules is public.';

const fieldsIntro =
  'Responses within a limit carry the fields of the limit closest to running out; refusals carry the refusing limit\u2019s, and when to try again.';

function allowedIntro(limit: PublicLimit): string {
  return `A response within a limit (${limit.rule.name}, ${limit.limit} ${limit.per}, all of it used by this request):`;
}

function deniedIntro(limit: PublicLimit): string {
  return (
    `When a limit is used up, requests are refused with 429 until it has room again. The body says which ` +
    `limit refused (\`rule\`) and how many seconds to wait (\`retryAfter\`, as in Retry-After); a blocked key's ` +
    `also says \`"reason": "ban"\` and \`bannedUntil\`. The next request of ${limit.rule.name} after the one above:`
  );
}

function unavailableIntro(page: LimitsPage, limit: PublicLimit): string {
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

const BACKOFF_INTRO =
  'Retry only on 429 and 503, never at once: wait the seconds Retry-After gives (when it is missing, wait longer ' +
  'each time), and add a random share on top, so that clients refused together do not all come back together.';

/** One row of a limits table: the rule it is of, and its cells in LIMIT_COLUMNS' order. */
export interface LimitRow {
  readonly rule: string;
  readonly cells: readonly string[];
}

/**
 * One block of the page. Paragraphs and limit cells may hold `code` spans; a limit's policy cell is the header's
 * value (or `-`), a field's name a header's name; `id` anchors a section in HTML.
 */
export type Block =
  | { readonly kind: 'heading'; readonly level: 1 | 2 | 3; readonly text: string; readonly id?: string }
  | { readonly kind: 'paragraph'; readonly text: string }
  | { readonly kind: 'limits'; readonly rows: readonly LimitRow[] }
  | { readonly kind: 'fields'; readonly rows: readonly (readonly [name: string, meaning: string])[] }
  | { readonly kind: 'code'; readonly code: string; readonly language: string; readonly label: string };

const heading = (level: 1 | 2 | 3, text: string, id?: string): Block =>
  id === undefined ? { kind: 'heading', level, text } : { kind: 'heading', level, text, id };
const paragraph = (text: string): Block => ({ kind: 'paragraph', text });
const http = (code: string, label: string): Block => ({ kind: 'code', code, language: 'http', label });

/** The responses' sections: headers, 429, 503 (none without a public limit). */
function responses(page: LimitsPage): Block[] {
  const { denied, unavailable } = page;
  if (denied === undefined || unavailable === undefined) return [];
  const samples = page.samples.get(denied.rule.name)!;
  const outage = page.samples.get(unavailable.rule.name)!.unavailable;
  return [
    heading(2, 'Response headers', 'headers'),
    paragraph(fieldsIntro),
    { kind: 'fields', rows: page.fields.map((f) => [f.name, f.meaning] as const) },
    paragraph(allowedIntro(denied)),
    http(httpText(samples.allowed), 'A response within a limit'),
    heading(2, '429 Too Many Requests', 'status-429'),
    paragraph(deniedIntro(denied)),
    http(httpText(samples.denied), '429 response'),
    heading(2, '503 Service Unavailable', 'status-503'),
    paragraph(unavailableIntro(page, unavailable)),
    http(httpText(outage), '503 response'),
  ];
}

/** The page's blocks, in order: title, limits per audience, responses, backing off. */
export function pageBlocks(page: LimitsPage): Block[] {
  const limits =
    page.limits.length === 0
      ? [paragraph(NONE_PUBLIC)]
      : byAudience(page.limits).flatMap(([who, list]): Block[] => [
          heading(3, who),
          {
            kind: 'limits',
            rows: list.map((limit) => ({ rule: limit.rule.name, cells: limitCells(page, limit) })),
          },
        ]);
  const backoff = page.backoff.flatMap((example): Block[] => [
    heading(3, example.title),
    { kind: 'code', code: example.code, language: example.language, label: `Backing off: ${example.title}` },
  ]);
  return [
    heading(1, title(page)),
    paragraph(intro(page)),
    heading(2, 'Limits', 'limits'),
    ...limits,
    ...responses(page),
    heading(2, 'Backing off', 'backoff'),
    paragraph(BACKOFF_INTRO),
    ...backoff,
  ];
}
