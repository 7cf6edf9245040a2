import { z } from 'zod';
import { ALGORITHM_NAMES } from '../algorithms/index.js';
import { show } from '../base/show.js';
import { adaptiveSpec, prioritySpec } from './adaptiveSchema.js';
import { dayStartMs, expiryMs } from './dates.js';
import { durationField, field, mustBe, wholeNumber, wholeRange } from './fieldSchemas.js';

/** Every algorithm a rule can name, in the order the docs list them: the registry's names. */
export const ALGORITHMS = ALGORITHM_NAMES;

const RULE_NAME = /^[a-z0-9_]+$/;

type Scalar = string | number | boolean;

function isScalar(value: unknown): value is Scalar {
  return (
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value))
  );
}

/** A string that passes `test`; its error says it must be `what`. */
function text(test: (value: string) => boolean, what: string) {
  return field<string>((value) => typeof value === 'string' && test(value), what);
}

/** Longest domain, rule or descriptor name: names go into headers, metric labels and Redis keys. */
export const MAX_NAME_LENGTH = 128;

/** A name that passes `test` and is at most MAX_NAME_LENGTH long; its error says it must be `what`. */
function name(test: (value: string) => boolean, what: string) {
  return z.custom<string>(
    (value) => typeof value === 'string' && value.length <= MAX_NAME_LENGTH && test(value),
    {
      error: (issue) =>
        typeof issue.input === 'string' && issue.input.length > MAX_NAME_LENGTH
          ? `must be at most ${MAX_NAME_LENGTH} characters, got ${issue.input.length}`
          : mustBe(what, issue.input),
    },
  );
}

const nonEmpty = (value: string) => value.trim().length > 0;
const descriptorName = name(nonEmpty, 'a descriptor name (not blank)');
const ruleName = name((value) => RULE_NAME.test(value), 'a rule name (lowercase letters, digits and _)');
const duration = durationField();
const period = durationField({ calendar: true });
const day = text((value) => dayStartMs(value) !== undefined, 'a date (YYYY-MM-DD)');
const expiry = text(
  (value) => expiryMs(value) !== undefined,
  'a date (YYYY-MM-DD) or ISO datetime with offset',
);

/** A named list in a match: `{list: blocked_ips}`, resolved from the limiter's `lists` option. */
export interface ListRef {
  readonly list: string;
}

/** Values a match field accepts, positively. */
type Accepted = Scalar | readonly Scalar[] | ListRef;

/** A match field as written: values, a list, or `{not: ...}` of either. */
export type MatchSpec = Accepted | { readonly not: Accepted };

const LIST_FORMS = 'a value, a list of values, {list: name} or {not: ...} of those';

/** What is wrong with a match field's value (the rest of a sentence naming the field), or undefined when it is a valid MatchSpec. */
function matchValueProblem(value: unknown, negated = false): string | undefined {
  if (isScalar(value)) return undefined;
  if (Array.isArray(value)) {
    if (value.length === 0) return 'must list at least one value (an empty list matches nothing)';
    const bad = value.find((item) => !isScalar(item));
    return bad === undefined
      ? undefined
      : `must list strings, numbers or booleans, got ${show(bad)} in the list`;
  }
  if (value === null || typeof value !== 'object') return mustBe(LIST_FORMS, value);
  const keys = Object.keys(value);
  const [only] = keys;
  if (keys.length !== 1 || (only !== 'list' && only !== 'not'))
    return mustBe('{list: name} or {not: [values]}', value);
  const inner = (value as Record<string, unknown>)[only];
  if (only === 'list') {
    return typeof inner === 'string' && RULE_NAME.test(inner) && inner.length <= MAX_NAME_LENGTH
      ? undefined
      : `must name a list (lowercase letters, digits and _), got ${show(inner)}`;
  }
  if (negated) return 'must not put a {not: ...} inside a {not: ...}: write the values to match';
  return matchValueProblem(inner, true);
}

const matchValue = z.custom<MatchSpec>((value) => matchValueProblem(value) === undefined, {
  error: (issue) => matchValueProblem(issue.input) ?? mustBe(LIST_FORMS, issue.input),
});

const percent = field<number>(
  (value) => typeof value === 'number' && value >= 0 && value <= 100,
  'a percentage from 0 to 100',
);

/** An empty list where one is optional but, when given, must say something. */
const NONE_LISTED = { error: 'must list at least one value, or be left out' };

const requestsLimit = z.strictObject({
  requests: wholeNumber(0),
  /** A duration, or for quotas a calendar period: day, week, month. */
  per: period,
  /** Capacity of token_bucket, gcra and leaky_bucket; defaults to requests. */
  burst: wholeNumber(1).optional(),
});

const concurrentLimit = z.strictObject({
  concurrent: wholeNumber(0),
  /** How long a lease lives if the request never releases it; default 60s. */
  lease: duration.optional(),
});

const limit = z.union([requestsLimit, concurrentLimit], {
  error: 'must be {requests, per} or {concurrent, lease}',
});

const cost = z.union(
  [
    wholeNumber(0),
    z.strictObject({ descriptor: descriptorName, max: wholeNumber(1) }),
    z.strictObject({
      by: descriptorName,
      values: z.record(z.string(), wholeNumber(0)).readonly(),
      default: wholeNumber(0),
    }),
  ],
  { error: 'must be a whole number, {descriptor, max} or {by, values, default}' },
);

/** Most sub-counters a rule can be split into. */
export const MAX_SHARDS = 1024;

const shards = wholeRange(1, MAX_SHARDS);

/** Local leases: units taken from the store per call, spent in process. */
const localLease = z.strictObject({ batch: wholeNumber(1) });

/**
 * `challenge: {after, difficulty, pass, for}`: from the `after`th counted violation the 429 carries a
 * proof-of-work challenge of `difficulty` leading zero bits (one more each later violation); a solution earns a
 * pass of `pass` requests for `for`.
 */
const challengeSpec = z.strictObject({
  after: wholeNumber(1),
  difficulty: wholeRange(1, 32).optional(),
  pass: wholeNumber(1).optional(),
  for: duration.optional(),
});

/** `ban: {after, within, for}`: block a key for `for` after `after` denials within `within`. */
const banSpec = z.strictObject({
  after: wholeNumber(1),
  within: duration,
  for: duration,
});

/** An HTTP status a `count` list can name. */
const httpStatus = wholeRange(100, 599, 'an HTTP status');

/** `count: failed | succeeded | [statuses]`: which responses the rule's counter keeps. */
const countSpec = z.union(
  [z.enum(['failed', 'succeeded']), z.array(httpStatus).nonempty(NONE_LISTED).readonly()],
  { error: 'must be failed, succeeded or a list of HTTP statuses' },
);

/** `retry_jitter: 10%`: a percentage written with `%`, above 0 and at most 100. */
const jitterPercent = field<string>(
  (value) => typeof value === 'string' && jitterFraction(value) !== undefined,
  'a percentage above 0% and at most 100% (say 10%)',
);

/** `10%` as 0.1; undefined unless it is a number above 0 and at most 100 followed by `%`. */
export function jitterFraction(text: string): number | undefined {
  const match = /^(\d{1,3}(?:\.\d+)?)%$/.exec(text.trim());
  const percent = match ? Number(match[1]) : Number.NaN;
  return percent > 0 && percent <= 100 ? percent / 100 : undefined;
}

/** One rule as written in a rules file: the shape only; meaning across fields and rules is checked apart. */
export const ruleSchema = z.strictObject({
  name: ruleName,
  match: z
    .record(z.string(), matchValue)
    .readonly()
    .default(() => ({})),
  key: z.array(descriptorName).readonly().optional(),
  global: z.boolean().default(false),
  /** Required for `action: limit`; deny and allow rules count nothing. */
  limit: limit.optional(),
  /** `limit` counts (default); `deny` refuses the request; `allow` exempts it from other rules. */
  action: z.enum(['limit', 'deny', 'allow']).default('limit'),
  /** For `action: allow`: the rules it exempts from; absent, every other rule. */
  exempt: z.array(ruleName).nonempty(NONE_LISTED).readonly().optional(),
  algorithm: z.enum(ALGORITHMS).default('sliding_window'),
  cost: cost.optional(),
  mode: z.enum(['enforce', 'shadow']).default('enforce'),
  rollout: percent.default(100),
  on_store_error: z.enum(['allow', 'deny']).default('allow'),
  overrides: ruleName.optional(),
  owner: text(nonEmpty, 'the name of a person or team').optional(),
  review: day.optional(),
  expires: expiry.optional(),
  /** Where it counts: the limiter's store (a region's own), in process, or one budget shared by every region. */
  scope: z.enum(['store', 'local', 'global']).default('store'),
  /** scope: global: a region cut off from the global store decides on limit × its recent share × this. */
  partition_margin: field<number>(
    (value) => typeof value === 'number' && value > 0 && value <= 10,
    'a number above 0 and at most 10 (1.1: a tenth above the share)',
  ).optional(),
  /** Hot keys: split the counter over this many sub-counters, each holding limit/shards. */
  shards: shards.optional(),
  /** Hot keys: take `batch` units per store call and spend them locally. */
  lease: localLease.optional(),
  /** Violations: block a key after repeated denials. */
  ban: banSpec.optional(),
  /** Violations: ban lengths for repeated bans, growing. */
  escalate: z.array(duration).nonempty(NONE_LISTED).readonly().optional(),
  /** Violations: units a denied request is charged. */
  penalty: wholeNumber(1).optional(),
  /** Retries: a request charged with an Idempotency-Key is not charged again for it within this time. */
  idempotent: duration.optional(),
  /** Counting by outcome: only failed, only succeeded, or these statuses are kept. */
  count: countSpec.optional(),
  /** Reserve and settle: the cost charged at admission is an estimate, settled by `limiter.settle`. */
  settle: z.boolean().optional(),
  /** Adaptive limits: the limit scaled by a factor from backend health (AIMD). */
  adaptive: adaptiveSpec.optional(),
  /** Shedding: the class of the requests the rule counts, or the descriptor naming it. */
  priority: prioritySpec.optional(),
  /** Retry-After on this rule's denials lengthened by up to this share, at random (`10%`). */
  retry_jitter: jitterPercent.optional(),
  /** Escalation: a warning once a key has used this share of its limit (`80%`). */
  warn_at: jitterPercent.optional(),
  /** Escalation: a proof-of-work challenge on the 429s from the `after`th violation (before the ban). */
  challenge: challengeSpec.optional(),
  /** `false` keeps the rule off the limits page and OpenAPI entries `sluice docs`/`openapi` write. */
  public: z.boolean().optional(),
});

/** The top of a rules file. Rules are validated one by one (see validate.ts) so that every rule reports. */
export const documentSchema = z.strictObject({
  domain: name(nonEmpty, 'a domain name'),
  rules: z.array(z.unknown()),
});

/** The whole rules file, for users who want to validate it with zod directly. */
export const rulesFileSchema = documentSchema.extend({ rules: z.array(ruleSchema) });

/** One rule as written in YAML or given in code: optional fields may be left out. */
export type RuleSpec = z.input<typeof ruleSchema>;

/** One rule after validation, defaults filled in. */
export type ParsedRule = z.output<typeof ruleSchema>;

/** The limit of a validated rule: `{requests, per, burst?}` or `{concurrent, lease?}`. */
export type LimitSpec = NonNullable<ParsedRule['limit']>;

/** Field names accepted at each level, for "did you mean" hints. */
export const FIELDS = {
  document: Object.keys(documentSchema.shape),
  rule: Object.keys(ruleSchema.shape),
  limit: [...Object.keys(requestsLimit.shape), ...Object.keys(concurrentLimit.shape)],
  cost: ['descriptor', 'max', 'by', 'values', 'default'],
  lease: Object.keys(localLease.shape),
  ban: Object.keys(banSpec.shape),
} as const;
