import { createHash } from 'node:crypto';
import type { LimitParams } from '../algorithms/limits.js';
import { durationMs, isCalendarPeriod } from '../base/duration.js';
import { RulesError } from '../base/errors.js';
import { checkOptionNames } from '../base/optionNames.js';
import { compileAdaptive } from './adaptivePolicy.js';
import { compileMatch } from './compileMatch.js';
import type { CompiledRule, CompiledRules, CostSpec } from './contract.js';
import { expiryMs } from './dates.js';
import { createMatcher } from './matcher.js';
import { deepFreeze, isValidatedDocument, placeFinding, type RulesDocument } from './parse.js';
import { compilePolicies } from './policies.js';
import { jitterFraction, type LimitSpec, type ParsedRule, type RuleSpec } from './schema.js';
import { compileStages } from './stages.js';
import { validateRules } from './validate.js';

/** Rules given in code: like a rules file, with `domain` optional. */
export interface RulesInput {
  /** Default `default`. */
  readonly domain?: string;
  readonly rules: readonly RuleSpec[];
}

/** Options for compileRules. */
export interface CompileOptions {
  /** Label for problems in rules given in code (say, the route they belong to). Default `<rules>`. */
  readonly source?: string;
}

const DEFAULT_LEASE_MS = 60_000;
const CODE_SOURCE = '<rules>';

/**
 * Compiles rules into an immutable, versioned, indexed table. A document from parseRules/loadRules is used as is;
 * rules from code are validated with the same checks and a RulesError lists every problem by field path.
 */
export function compileRules(input: RulesInput | RulesDocument, options: CompileOptions = {}): CompiledRules {
  checkOptionNames('compileRules', options, ['source']);
  const { domain, rules } = isValidatedDocument(input)
    ? input
    : validateInput(input, options.source ?? CODE_SOURCE);
  const compiled = (rules as readonly ParsedRule[]).map(compileRule);
  return createMatcher(domain, versionOf(domain, compiled), compiled);
}

function validateInput(input: RulesInput, source: string): { domain: string; rules: readonly ParsedRule[] } {
  const hasDomain = typeof input === 'object' && input !== null && input.domain !== undefined;
  const result = validateRules(hasDomain ? input : { ...input, domain: 'default' });
  if (!result.value) throw new RulesError(result.errors.map((finding) => placeFinding(source, finding)));
  return result.value;
}

/** One validated rule as the engine uses it: defaults applied, durations in ms, match values as strings. */
function compileRule(rule: ParsedRule): CompiledRule {
  const expiresAt = rule.expires === undefined ? undefined : expiryMs(rule.expires);
  return deepFreeze({
    name: rule.name,
    ...compileMatch(rule.match),
    ...(rule.action === 'limit' ? {} : { action: rule.action }),
    ...(rule.exempt === undefined ? {} : { exempt: [...rule.exempt] }),
    key: rule.key ?? [],
    global: rule.global,
    algorithm: rule.algorithm,
    params: rule.limit === undefined ? NO_LIMIT : paramsOf(rule.limit),
    ...(rule.cost === undefined ? {} : { cost: structuredClone(rule.cost) as CostSpec }),
    mode: rule.mode,
    rollout: rule.rollout,
    onStoreError: rule.on_store_error,
    ...(rule.overrides === undefined ? {} : { overrides: rule.overrides }),
    ...(rule.owner === undefined ? {} : { owner: rule.owner }),
    ...(rule.review === undefined ? {} : { review: rule.review }),
    ...(expiresAt === undefined ? {} : { expiresAt }),
    scope: rule.scope,
    ...(rule.partition_margin === undefined ? {} : { partitionMargin: rule.partition_margin }),
    ...(rule.shards === undefined || rule.shards === 1 ? {} : { shards: rule.shards }),
    ...(rule.lease === undefined ? {} : { lease: { batch: rule.lease.batch } }),
    ...compilePolicies(rule),
    ...compileAdaptive(rule),
    ...retryJitterOf(rule),
    ...compileStages(rule),
  });
}

/** `retry_jitter: 10%` as `{retryJitter: 0.1}`; nothing when the rule has none. */
function retryJitterOf(rule: ParsedRule): Pick<CompiledRule, 'retryJitter'> {
  const fraction = rule.retry_jitter === undefined ? undefined : jitterFraction(rule.retry_jitter);
  return fraction === undefined ? {} : { retryJitter: fraction };
}

/** Params of a deny or allow rule, which counts nothing. */
const NO_LIMIT: LimitParams = { limit: 0, windowMs: 0, burst: 0 };

function paramsOf(limit: LimitSpec): LimitParams {
  if ('concurrent' in limit) {
    const leaseMs =
      limit.lease === undefined ? DEFAULT_LEASE_MS : (durationMs(limit.lease) ?? DEFAULT_LEASE_MS);
    return { limit: limit.concurrent, windowMs: leaseMs, burst: limit.concurrent };
  }
  if (isCalendarPeriod(limit.per)) {
    return { limit: limit.requests, windowMs: 0, burst: limit.requests, period: limit.per };
  }
  return {
    limit: limit.requests,
    windowMs: durationMs(limit.per) ?? 0,
    burst: limit.burst ?? limit.requests,
  };
}

/** First 12 hex digits of the sha256 of a canonical JSON (sorted keys) of the domain and compiled rules. */
function versionOf(domain: string, rules: readonly CompiledRule[]): string {
  // Hashed rule by rule: one large string for a big table would only feed the garbage collector.
  const hash = createHash('sha256').update(`{"domain":${JSON.stringify(domain)},"rules":[`);
  for (const [index, rule] of rules.entries())
    hash.update(index === 0 ? canonicalJson(rule) : `,${canonicalJson(rule)}`);
  return hash.update(']}').digest('hex').slice(0, 12);
}

function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );
}
