/**
 * What the limits page says, gathered once for both of its forms (Markdown and HTML): the public limits, the
 * responses the limiter really sends for them, what each header means, and how to back off.
 */
import type { CompiledRules } from '@sluice/core';
import type { HeaderFormat } from '@sluice/core/http';
import { type BackoffExample, backoffExamples } from './backoff.js';
import { type LimitSamples, limitSamples, SAMPLE_TIME, type SampleResponse } from './examples.js';
import { type PublicLimit, publicLimits } from './limits.js';

/** A response header and what it tells a client. */
export interface FieldMeaning {
  readonly name: string;
  readonly meaning: string;
}

/** Everything the page shows. */
export interface LimitsPage {
  readonly domain: string;
  readonly version: string;
  readonly format: HeaderFormat;
  readonly limits: readonly PublicLimit[];
  /** Each limit's responses, by rule name. */
  readonly samples: ReadonlyMap<string, LimitSamples>;
  /** The limit whose 429 the page shows (the first), and whose 503 (the first that fails closed, else it). */
  readonly denied: PublicLimit | undefined;
  readonly unavailable: PublicLimit | undefined;
  readonly fields: readonly FieldMeaning[];
  readonly backoff: readonly BackoffExample[];
}

const MEANINGS: Readonly<Record<string, string>> = {
  'ratelimit-policy':
    'The limit that applies: its name, quota (`q`, or the first number) and window in seconds (`w`).',
  ratelimit:
    'What is left of it: the requests remaining (`r`, or `remaining`) and the seconds until it is whole again (`t`, or `reset`).',
  'ratelimit-limit': 'The quota of the limit that applies.',
  'ratelimit-remaining': 'The requests remaining in it.',
  'ratelimit-reset': 'Seconds until it is whole again.',
  'x-ratelimit-limit': 'The quota of the limit that applies (older clients read this).',
  'x-ratelimit-remaining': 'The requests remaining in it.',
  'x-ratelimit-reset': 'When it is whole again, as a Unix time in seconds.',
  'retry-after': 'On a 429 or 503: the seconds to wait before trying again.',
  'x-ratelimit-rule': 'On a 429 or 503: the limit that refused the request.',
  'cache-control': 'On a 429 or 503: `no-store`, so that no cache answers with the refusal later.',
};

/** The rate-limit headers the samples carry, with their meanings, in the order a response lists them. */
function fieldsOf(samples: Iterable<LimitSamples>): FieldMeaning[] {
  const seen = new Map<string, FieldMeaning>();
  for (const sample of samples)
    for (const response of [sample.allowed, sample.denied, sample.unavailable])
      for (const [name] of response.headers) {
        const meaning = MEANINGS[name.toLowerCase()];
        if (meaning !== undefined && !seen.has(name.toLowerCase()))
          seen.set(name.toLowerCase(), { name, meaning });
      }
  return [...seen.values()];
}

/** The URL of the backoff examples: the first public limit's route under `baseUrl`. */
function exampleUrl(baseUrl: string, limit: PublicLimit | undefined): string {
  const route = limit?.routes.only?.[0] ?? '/';
  return `${baseUrl.replace(/\/+$/, '')}${route.replace(/:(\w+)/g, '$1').replace(/\{(\w+)\}/g, '$1')}`;
}

/**
 * Gathers the page of a table: its public limits (`hidden`: the rules marked `public: false`), their real
 * responses in `format`, the meanings, the examples.
 */
export async function limitsPage(
  table: CompiledRules,
  hidden: ReadonlySet<string>,
  format: HeaderFormat,
  baseUrl: string,
): Promise<LimitsPage> {
  const limits = publicLimits(table, hidden, SAMPLE_TIME);
  const samples = new Map<string, LimitSamples>();
  for (const limit of limits) samples.set(limit.rule.name, await limitSamples(limit.rule, format));
  const denied = limits[0];
  return {
    domain: table.domain,
    version: table.version,
    format,
    limits,
    samples,
    denied,
    unavailable: limits.find((limit) => limit.failsClosed) ?? denied,
    fields: fieldsOf(samples.values()),
    backoff: backoffExamples(exampleUrl(baseUrl, denied)),
  };
}

/** A header's value in a response, by name (any case). */
export function headerOf(response: SampleResponse, name: string): string | undefined {
  return response.headers.find(([field]) => field.toLowerCase() === name.toLowerCase())?.[1];
}
