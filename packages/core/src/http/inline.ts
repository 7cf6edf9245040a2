import { z } from 'zod';
import { ConfigError } from '../base/errors.js';
import { unknownName } from '../base/optionNames.js';
import { ALGORITHMS, parseDuration } from '../rules/index.js';
import type { RuleSpec } from '../rules/schema.js';

/**
 * The inline shorthand for the simplest case, no rules file: `{limit: 100, per: '1m'}` per client IP. It
 * compiles to ordinary rules (`explain` shows them).
 */
export interface InlineLimit {
  /** Requests allowed in each `per`. */
  readonly limit: number;
  /** The window: `1s`, `60s`, `1m`, `1h`, `1d`. */
  readonly per: string;
  /**
   * Who is counted: the client IP (default), or the API key, with anonymous requests (no key, or one
   * `validateApiKey` refused) counted per IP under the same limit.
   */
  readonly key?: 'ip' | 'api_key';
  /** Route shorthand only: the rule name (its counters' identity). Default: from the route. */
  readonly name?: string;
  /**
   * How requests are counted, as a rule's `algorithm` (default `sliding_window`). `first_request_window` counts
   * as express-rate-limit and the other middleware do: a window per client from its first request.
   */
  readonly algorithm?: InlineAlgorithm;
}

/** The algorithms whose limit the shorthand's `{limit, per}` writes (`concurrency` takes a rule). */
export type InlineAlgorithm = Exclude<(typeof ALGORITHMS)[number], 'concurrency'>;

/** The shorthand's `algorithm` field: a rule's, but for `concurrency`, whose limit is not a rate. */
export const inlineAlgorithm = z.enum(ALGORITHMS).exclude(['concurrency']);

/** Whether a value is meant as the shorthand: a number `limit` or a `per` (a rule's `limit` is an object). */
export function isInlineLimit(value: unknown): value is InlineLimit {
  if (typeof value !== 'object' || value === null) return false;
  const { limit, per } = value as { limit?: unknown; per?: unknown };
  return typeof limit === 'number' || per !== undefined;
}

const DURATION = 'must be a duration such as "1s", "60s", "1m", "1h" or "1d"';

/** A `per` that parses as a duration; missing or not a string, it gets the same plain words. */
export const inlineDuration = z.string({ error: DURATION }).refine(isDuration, { message: DURATION });

function isDuration(text: string): boolean {
  try {
    return parseDuration(text) > 0;
  } catch {
    return false;
  }
}

const WHOLE = 'must be a whole number of at least 1';

/** The shorthand's `limit`, in plain words rather than a validator's (`0`: not "too small: expected >0"). */
export const inlineLimit = z.number({ error: WHOLE }).int({ error: WHOLE }).positive({ error: WHOLE });

const inlineSchema = z
  .object({
    limit: inlineLimit,
    per: inlineDuration,
    key: z.enum(['ip', 'api_key']).optional(),
    algorithm: inlineAlgorithm.optional(),
    name: z
      .string()
      .regex(/^[a-z0-9_]{1,100}$/, 'must be lower-case letters, digits and _')
      .optional(),
  })
  .strict();

/** The shorthand's fields and `afterBody`, the route option beside them: what a misspelling was meant to be. */
const SHORTHAND_FIELDS = [...Object.keys(inlineSchema.shape), 'afterBody'];

/** Checks a route's shorthand; throws a ConfigError naming the route and the wrong fields. */
export function parseInlineLimit(value: unknown, label: string): InlineLimit {
  const parsed = inlineSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => unknownName(key, SHORTHAND_FIELDS, { kind: 'field' })).join('; ')
      : `${issue.path.map(String).join('.') || 'value'}: ${issue.message}`,
  );
  throw new ConfigError(
    `${label}: the shorthand {limit, per, key?, algorithm?, name?}: ${problems.join('; ')}`,
  );
}

/**
 * The rules of a shorthand, each named from `name` and counted by its `algorithm`: per IP one rule
 * (`<name>`); per API key one rule keyed by the key for requests that have one, and `<name>_anonymous` per IP
 * for the rest, so that dropping or faking a key does not escape the limit.
 */
export function inlineRules(inline: InlineLimit, name: string): RuleSpec[] {
  const limit = { requests: inline.limit, per: inline.per };
  const counted = inline.algorithm === undefined ? {} : { algorithm: inline.algorithm };
  if (inline.key !== 'api_key') return [{ name, key: ['ip'], limit, ...counted }];
  return [
    { name, match: { auth: 'api_key' }, key: ['api_key'], limit, ...counted },
    { name: `${name}_anonymous`, match: { auth: 'anonymous' }, key: ['ip'], limit, ...counted },
  ];
}

/** A rule name made of a route's method and path: `GET /users/:id` gives `get_users_id`. */
export function routeRuleName(method: string, path: string): string {
  const words = `${method} ${path}`.toLowerCase().match(/[a-z0-9]+/g) ?? [];
  return words.join('_').slice(0, 100) || 'route';
}
