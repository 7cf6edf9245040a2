/**
 * What each field of a rules file means, keyed by its path in the schema (`limit.per`, `adaptive.latency.max`).
 * The schema (packages/core/src/rules/schema.ts) is the source of every field's type, default and allowed
 * values; this table only adds the prose, kept here so the schema file stays the validator's.
 * test/docs/generated.test.ts fails when a schema field has no entry here or an entry names no field.
 */
export const RULE_FIELD_NOTES: Readonly<Record<string, string>> = {
  domain: 'Names the rule set in metrics and `sluice push`; top level, beside `rules`.',
  rules: 'The rules, each validated on its own so that every faulty rule reports.',
  name: 'The rule id in headers, metrics and logs; unique in the file.',
  match:
    'Descriptor → value, list of values, `{list: name}` or `{not: ...}` of those. Every field must match; a list means any of; `{}` matches every request.',
  key: 'The descriptors the counter is keyed by; a request lacking one of them skips the rule. Required unless `global`.',
  global: 'One counter for everyone; needs `key: []`.',
  limit: 'Required for `action: limit`: `{requests, per, burst?}` or `{concurrent, lease?}`.',
  'limit.requests': 'Requests allowed in each `per`; 0 only with `expires`.',
  'limit.per':
    'The window; a bare number (`per: 60`) is refused with a hint to add a unit; calendar periods are UTC.',
  'limit.burst': 'Capacity of token_bucket, gcra and leaky_bucket; defaults to `requests`.',
  'limit.concurrent': 'Requests in flight at once (the `concurrency` algorithm).',
  'limit.lease': 'How long a lease lives if the request never releases it; default 60s.',
  action:
    '`limit` counts; `deny` refuses matching requests without counting; `allow` exempts them from other rules (allow > deny > limit).',
  exempt: 'With `action: allow`: the rules it exempts from; absent, every other rule.',
  algorithm: 'How requests are counted; `concurrency` goes with the `concurrent` form.',
  cost: 'Units a request is charged: a whole number, `{descriptor, max}` or `{by, values, default}`; else the cost given in code, else 1.',
  'cost.descriptor': 'The descriptor whose value is the cost.',
  'cost.max': 'The most a descriptor-given cost may be.',
  'cost.by': 'The descriptor whose value picks the cost from `values`.',
  'cost.values': 'Cost by descriptor value.',
  'cost.default': 'Cost of a value `values` does not list.',
  mode: 'Shadow rules are counted and reported, never deny.',
  rollout: 'Percentage of keys enforced (a stable hash of the key); the rest are shadowed.',
  on_store_error: 'What the rule does when the store fails or times out; `deny` answers 503.',
  overrides:
    "Another rule's name: this rule replaces it wherever both apply, transitively; no self or cycles.",
  owner: 'Who answers for the rule; missing → a warning.',
  review: 'A date to look at the rule again; in the past → a warning "review overdue since …".',
  expires: 'The rule stops applying at that time (a date: the end of that UTC day).',
  scope:
    "`local` keeps the counter in process memory; `global` draws on one budget shared by every region (the limiter's `regions` option; fixed_window or quota).",
  partition_margin:
    'scope: global: a region cut off from the global store decides on the limit × its recent share × this (default the `regions.margin` option, 1.1).',
  shards: 'Hot keys: the counter split over this many sub-counters of limit/shards each; at most the limit.',
  lease: 'Hot keys: take units from the store in batches and spend them locally.',
  'lease.batch': 'Units taken per store call; overshoot is at most one batch per gateway per window.',
  ban: 'Block a key for `for` after `after` denials within `within`.',
  'ban.after': 'Denials that trigger a ban.',
  'ban.within': 'The time those denials must fall in.',
  'ban.for': 'How long the ban lasts.',
  escalate:
    'Lengths of the second, third, ... ban of a key, each longer than the one before; the last repeats; needs `ban`.',
  penalty: 'Units a denied request is charged, as far as the limit has room; not on concurrency.',
  idempotent: 'A request charged with an `Idempotency-Key` is not charged again for it within this time.',
  count:
    'Which responses stay counted: failed, succeeded, or these statuses; the others are refunded when they end.',
  settle:
    "Reserve and settle: the cost charged at admission is an estimate, settled by `limiter.settle(decision, actual)` or an adapter's `settleHeader`.",
  adaptive:
    'The limit scaled by a factor from backend health (AIMD), shared by the fleet; names `error_rate`, `latency` or both.',
  'adaptive.error_rate': 'Target share of responses with a 5xx status; above it the factor drops.',
  'adaptive.latency': 'Target latency percentile: `{percentile: 99, max: 500ms}`.',
  'adaptive.latency.percentile': 'The percentile watched, e.g. 99 for p99.',
  'adaptive.latency.max': 'The latency that percentile must stay under.',
  'adaptive.decrease': 'Multiplies the factor after an unhealthy interval; default 0.5.',
  'adaptive.increase': 'Added to the factor after a healthy interval; default 0.1.',
  'adaptive.floor': 'The least factor; default 0.1.',
  'adaptive.interval': 'How long outcomes are gathered before each judgement; default 1s.',
  'adaptive.min_samples': 'Fewer responses than this in an interval judge nothing bad; default 20.',
  'adaptive.shed_below': 'Below this factor, sheddable requests are refused outright; default 0.5.',
  priority:
    'The class of the requests the rule counts, or the descriptor naming it; under pressure the lowest class is shed first.',
  'priority.descriptor': "The descriptor whose value is the request's class.",
  'priority.default': 'The class of a request whose descriptor names none.',
  retry_jitter: "Retry-After of this rule's denials lengthened at random by 0 to this share (`10%`).",
  warn_at:
    'Escalation: an allowed request of a key past this share of its limit carries `Sluice-Stage: warn`.',
  challenge:
    'Escalation: from the `after`th violation the 429 carries a proof-of-work challenge (needs `ban`, and the adapter option `challenge: {secret}`).',
  'challenge.after': 'The counted violation from which challenges are sent; below the ban’s `after`.',
  'challenge.difficulty': 'Leading zero bits of the first challenge; one more each later violation.',
  'challenge.pass': 'Uncounted requests a solution earns.',
  'challenge.for': 'How long a pass lasts.',
  public:
    '`false` leaves the rule out of the limits page (`sluice docs`) and the OpenAPI entries (`sluice openapi`) written for API users.',
};
