import { z } from 'zod';
import { ConfigError } from '../base/errors.js';
import { NOTICE_CODES as CODES } from '../base/notices.js';
import { unknownName } from '../base/optionNames.js';
import { closest } from '../base/show.js';
import type { ChallengeOptions, StageObserver } from '../escalation/index.js';
import { HEADER_FORMATS, type HeaderFormat } from '../fields/responses.js';
import type { Lists } from '../lists/contract.js';
import { DEFAULT_IPV6_SUBNET } from '../net/ip.js';
import type { Observer } from '../observe/contract.js';
import type { SampleRates } from '../observe/decisionLog.js';
import type { RegionsOptions } from '../regions/index.js';
import {
  type AddressDescriptors,
  DEFAULT_RETRY_HEADER,
  MAX_DESCRIPTOR_LENGTH,
} from '../request/descriptors.js';
import type { RulesSource } from '../rules/contract.js';
import type { RulesLike } from '../rules/index.js';
import type { Store } from '../store/contract.js';
import type { WatchOptions } from '../watch/options.js';
import { type InlineAlgorithm, inlineAlgorithm, inlineDuration, inlineLimit } from './inline.js';

/** Where a limiter step failed inside an adapter (never surfaced to the user's route). */
export type AdapterStage =
  | 'skip'
  | 'descriptors'
  | 'api_key'
  | 'validate_api_key'
  | 'cost'
  | 'check'
  | 'release'
  | 'on_denied';

/** An {@link Observer} that also hears of failures inside the adapter (a throwing `descriptors`, say). */
export interface AdapterObserver extends Observer, StageObserver {
  onAdapterError?(error: Error, stage: AdapterStage): void;
}

/** Where start-up notices go (the default-rules announcement, misconfiguration smells). */
export interface RateLimitLogger {
  warn(message: string): void;
  /** Receives decision lines (objects) when `decisionLog` is on; pino's and console's both do. */
  info?(entry: object): void;
}

/** A notice code the `silence` option accepts: a proxy trust smell's, an adapter's or a limiter's. */
export type NoticeCode = (typeof CODES)['proxy' | 'adapter' | 'limiter'][number];

/** A descriptor value the app may return; numbers and booleans are stringified. */
export type DescriptorValue = string | number | boolean | undefined;

/** Options every adapter takes; `Req` is the framework's request (or its context). */
export interface RateLimitOptions<Req> {
  /**
   * A YAML file path, a rules object (`{domain, rules: [...]}`), compiled rules, or a source that reloads
   * them (`watchRules(path)`). Default: 60 requests a minute per client IP, or the shorthand's rule.
   */
  rules?: RulesLike | RulesSource;
  /** Shorthand instead of `rules`: this many requests in each `per`, per client IP (or per `key`). */
  limit?: number;
  /** Shorthand: the window of `limit` (`1s`, `60s`, `1m`, `1h`, `1d`). */
  per?: string;
  /** Shorthand: count per client IP (default), or per API key with anonymous requests per IP. */
  key?: 'ip' | 'api_key';
  /**
   * Shorthand: how requests are counted (default `sliding_window`); `first_request_window` for a window per
   * client from its first request, as express-rate-limit and the other middleware count.
   */
  algorithm?: InlineAlgorithm;
  /** Where counters live. Default: an in-process MemoryStore. */
  store?: Store;
  /** Counters of `scope: local` rules. Default: a MemoryStore. */
  localStore?: Store;
  /**
   * This gateway's region and the store every region shares: `scope: global` rules count in `store` against
   * the region's grant of one global budget (createLimiter's `regions`, docs/guide/regions.md).
   */
  regions?: RegionsOptions;
  /**
   * Heavy hitters per rule (createLimiter's `watch`, docs/guide/watching.md): `{publish: true}` publishes this
   * gateway's board to the store for `sluice top` and `sluice dashboard`; `false` turns the sketches off.
   */
  watch?: WatchOptions | false;
  /** Extra descriptors (tenant, plan, user, ...); they win over the built-in ones. May be async. */
  descriptors?: (
    req: Req,
  ) => Readonly<Record<string, DescriptorValue>> | Promise<Readonly<Record<string, DescriptorValue>>>;
  /** The request's API key. Default: the `apiKeyHeader` header. */
  apiKey?: (req: Req) => string | undefined;
  /**
   * Whether the request's API key is a real one (a lookup, a signature check; may be async, cache it). A key
   * it refuses (false, a throw) is treated as no key: `auth` is `anonymous` and the per-IP rules apply, so a
   * client cannot escape them with random keys. Without it, rules keyed by `api_key` count any header value.
   */
  validateApiKey?: (key: string, req: Req) => boolean | Promise<boolean>;
  /** Header holding the API key. Default `x-api-key`. */
  apiKeyHeader?: string;
  /**
   * Header holding a retry's number (1 for the first retry; absent or 0 on a first attempt), read into the
   * `retry` and `retry_attempt` descriptors when rules use them. Default `Retry-Attempt`, which @sluice/client sends.
   */
  retryHeader?: string;
  /**
   * Lists the rules name (`match: {ip: {list: blocked_ips}}`), by name: `fileList(path)`, `redisList(...)`,
   * `valueList([...])`. Every list the rules (route rules included) name must be given.
   */
  lists?: Lists;
  /**
   * Descriptors read from the client's whole address, such as `asn`, `as_org` and `country` from
   * `geoipDescriptors(...)` of @sluice/geoip; looked up only for requests whose rules read one of them.
   */
  addressDescriptors?: AddressDescriptors;
  /**
   * The request's cost, for rules without a cost of their own; undefined: the rule's (default 1). May be
   * async (`await c.req.json()`). On a route with `afterBody`, it runs once the body is parsed.
   */
  cost?: (req: Req) => number | undefined | Promise<number | undefined>;
  /**
   * Rate-limit header set on responses. Default `draft` (IETF draft 8 and later); `draft-7` or `draft-6` for
   * clients that read those (express-rate-limit's `standardHeaders`), `legacy` for `X-RateLimit-*`, a
   * standard form and legacy as `draft-7+legacy`, `both` (`draft-8+legacy`), or `none`.
   */
  headers?: HeaderFormat;
  /**
   * Reserve and settle: the response header carrying the request's actual cost (`x-usage-tokens`, say), read
   * when the response ends for the rules with `settle` the app did not settle itself.
   */
  settleHeader?: string;
  /** Metrics and logs hooks. */
  observer?: AdapterObserver;
  /** Requests for which it returns true are not limited (health checks, say). May be async. */
  skip?: (req: Req) => boolean | Promise<boolean>;
  /** Milliseconds clock. Default `Date.now`; tests inject their own. */
  clock?: () => number;
  /** Backstop timeout on each store call, ms. Default 1000. */
  timeoutMs?: number;
  /** HMAC secret for counter tags. */
  keySecret?: string;
  /** IPv6 prefix length a client is keyed by, 32 to 64. Default 64. */
  ipv6Subnet?: number;
  /** Whether the router tells `/Search` from `/search` (for the `route` descriptor). Default false. */
  caseSensitiveRoutes?: boolean;
  /** Descriptor values longer than this are hashed. Default 256. */
  maxValueLength?: number;
  /** Where notices go (and, with `decisionLog`, decision lines). Default `console`. */
  logger?: RateLimitLogger;
  /**
   * Sampled JSON decision lines to `logger.info` (descriptor values hashed, with `keySecret` when given):
   * `true` for the default rates (denied, shadow-denied and failed-open all logged, allowed none), or rates.
   */
  decisionLog?: true | SampleRates;
  /** Notice codes not to log (`SLUICE_XFF_UNTRUSTED`, `SLUICE_UNVALIDATED_API_KEY`, ...). */
  silence?: readonly NoticeCode[];
  /** Every rule behaves as `mode: shadow` (counted, logged, never denied): for a first deployment. Default false. */
  dryRun?: boolean;
  /**
   * Proof-of-work challenges of rules with `challenge` (RULES.md, Stages): `secret` signs them (the same on
   * every process sharing a store); `ttlMs` (default 60000) how long one may be solved; `page` (default true)
   * a page that solves it for browsers. Required when a rule has `challenge`.
   */
  challenge?: ChallengeOptions;
}

/** The options after validation, defaults filled in. */
export interface ResolvedOptions<Req> extends RateLimitOptions<Req> {
  readonly headers: HeaderFormat;
  readonly apiKeyHeader: string;
  readonly retryHeader: string;
  readonly ipv6Subnet: number;
  readonly caseSensitiveRoutes: boolean;
  readonly maxValueLength: number;
  readonly logger: RateLimitLogger;
}

const isFunction = (value: unknown): boolean => typeof value === 'function';
const fn = z.custom<(...args: never[]) => unknown>(isFunction, { message: 'must be a function' });
const hasMethods = (value: unknown, names: readonly string[]): boolean =>
  typeof value === 'object' &&
  value !== null &&
  names.every((name) => isFunction((value as Record<string, unknown>)[name]));
const store = z.custom<Store>((value) => hasMethods(value, ['evaluate', 'release', 'close']), {
  message: 'must be a Store: an object with evaluate(checks, now), release(leases, now) and close()',
});
const lists = z.custom<Lists>(
  (value) =>
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((list) => hasMethods((list as { current?: unknown })?.current, ['has'])),
  { message: 'must map list names to lists: fileList(path), redisList(...) or valueList([...])' },
);
const headerName = z
  .string()
  .regex(/^[!#$%&'*+.^_`|~0-9a-z-]+$/i, 'must be a header name')
  .optional();
const rules = z.custom<RulesLike | RulesSource>(
  (value) => (typeof value === 'string' && value !== '') || (typeof value === 'object' && value !== null),
  { message: 'must be a rules file path, a rules object or compiled rules' },
);

const rate = z.number().min(0).max(1).optional();
const sampleRates = z
  .object({ allowed: rate, denied: rate, shadowDenied: rate, failedOpen: rate })
  .strict() satisfies z.ZodType<SampleRates>;
const SAMPLE_NAMES = Object.keys(sampleRates.shape);

// Shorter prefixes lump many subscribers into one counter; longer ones let one subscriber hop between many.
const IPV6_SUBNET_RANGE = 'must be a prefix length from 32 to 64 (64: one subscriber)';

/** The codes `silence` takes, from the one registry of notice codes (base/notices.ts). */
const SILENCEABLE: [NoticeCode, ...NoticeCode[]] = [...CODES.proxy, ...CODES.adapter, ...CODES.limiter];

/** The one schema of the options all three adapters take (`onDenied` is typed per framework). */
export const rateLimitOptionsSchema = z
  .object({
    rules: rules.optional(),
    limit: inlineLimit.optional(),
    per: inlineDuration.optional(),
    key: z.enum(['ip', 'api_key']).optional(),
    algorithm: inlineAlgorithm.optional(),
    store: store.optional(),
    localStore: store.optional(),
    // Its fields are checked, with a did-you-mean, by the engine (regions/options.ts).
    regions: z
      .custom<RegionsOptions>((value) => typeof value === 'object' && value !== null, {
        message: 'must be {region, global, ...}',
      })
      .optional(),
    // Its fields are checked, with a did-you-mean, by the engine (watch/options.ts).
    watch: z
      .custom<WatchOptions | false>(
        (value) => value === false || (typeof value === 'object' && value !== null),
        {
          message: 'must be {publish, intervalMs, ...} or false',
        },
      )
      .optional(),
    descriptors: fn.optional(),
    apiKey: fn.optional(),
    validateApiKey: fn.optional(),
    apiKeyHeader: headerName,
    retryHeader: headerName,
    lists: lists.optional(),
    addressDescriptors: z
      .custom<AddressDescriptors>(
        (value) => hasMethods(value, ['describe']) && Array.isArray((value as { names?: unknown }).names),
        { message: 'must give names and describe(address): geoipDescriptors(...) of @sluice/geoip' },
      )
      .optional(),
    cost: fn.optional(),
    headers: z.enum(HEADER_FORMATS).optional(),
    settleHeader: headerName,
    observer: z
      .custom<AdapterObserver>((value) => typeof value === 'object' && value !== null, {
        message: 'must be an object of observer hooks',
      })
      .optional(),
    onDenied: fn.optional(),
    skip: fn.optional(),
    clock: fn.optional(),
    timeoutMs: z.number().positive().optional(),
    keySecret: z.string().min(1).optional(),
    ipv6Subnet: z.number().int().min(32, IPV6_SUBNET_RANGE).max(64, IPV6_SUBNET_RANGE).optional(),
    caseSensitiveRoutes: z.boolean().optional(),
    maxValueLength: z.number().int().min(16).optional(),
    silence: z.array(z.enum(SILENCEABLE)).optional(),
    dryRun: z.boolean().optional(),
    logger: z
      .custom<RateLimitLogger>((value) => hasMethods(value, ['warn']), {
        message: 'must have a warn(message) method',
      })
      .optional(),
    decisionLog: z.union([z.literal(true), sampleRates]).optional(),
    // Its fields are checked, with a did-you-mean, in the same resolve (settings.ts: escalation's challengeSetup).
    challenge: z
      .custom<ChallengeOptions>((value) => typeof value === 'object' && value !== null, {
        message: 'must be {secret, ttlMs?, page?}',
      })
      .optional(),
  })
  .strict()
  .refine((options) => options.decisionLog === undefined || hasMethods(options.logger ?? console, ['info']), {
    message: 'decision logs need a logger with an info(object) method',
    path: ['logger'],
  })
  .superRefine(checkShorthand);

const SHORTHAND = "{limit: 100, per: '1m'}";

/** The shorthand takes `limit` and `per` together, `key` and `algorithm` only with them, and never beside `rules`. */
function checkShorthand(
  options: { rules?: unknown; limit?: unknown; per?: unknown; key?: unknown; algorithm?: unknown },
  context: z.RefinementCtx,
): void {
  const problem = (path: string, message: string) =>
    context.addIssue({ code: 'custom', path: [path], message });
  const { limit, per } = options;
  if (limit !== undefined && per === undefined)
    problem('per', `the shorthand needs a window too: ${SHORTHAND}`);
  if (per !== undefined && limit === undefined)
    problem('limit', `the shorthand needs a limit too: ${SHORTHAND}`);
  if (options.key !== undefined && limit === undefined && per === undefined)
    problem('key', `goes with the shorthand: ${SHORTHAND.replace('}', ", key: 'api_key'}")}`);
  if (options.algorithm !== undefined && limit === undefined && per === undefined)
    problem(
      'algorithm',
      `goes with the shorthand: ${SHORTHAND.replace('}', ", algorithm: 'fixed_window'}")}`,
    );
  if (options.rules !== undefined && (limit !== undefined || per !== undefined))
    problem('rules', `give rules or the shorthand ${SHORTHAND}, not both`);
}

/**
 * Validates adapter options at start-up and fills in defaults. Throws a ConfigError naming every wrong
 * option (an unknown option included: a typo must not be silently ignored).
 */
export function resolveOptions<Req, O extends RateLimitOptions<Req>>(
  options: O | undefined,
): O & ResolvedOptions<Req> {
  const parsed = rateLimitOptionsSchema.safeParse(options ?? {});
  if (!parsed.success)
    throw new ConfigError(`invalid rate limit options: ${describeIssues(parsed.error.issues)}`);
  const given = (options ?? {}) as O;
  return {
    ...given,
    headers: given.headers ?? 'draft',
    apiKeyHeader: (given.apiKeyHeader ?? 'x-api-key').toLowerCase(),
    retryHeader: (given.retryHeader ?? DEFAULT_RETRY_HEADER).toLowerCase(),
    ipv6Subnet: given.ipv6Subnet ?? DEFAULT_IPV6_SUBNET,
    caseSensitiveRoutes: given.caseSensitiveRoutes ?? false,
    maxValueLength: given.maxValueLength ?? MAX_DESCRIPTOR_LENGTH,
    logger: given.logger ?? console,
  };
}

/** Options of express-rate-limit, @fastify/rate-limit, koa-ratelimit and rate-limiter-flexible: ours. */
const FOREIGN_OPTIONS: Readonly<Record<string, string>> = {
  max: 'limit',
  points: 'limit',
  windowMs: 'per',
  timeWindow: 'per',
  duration: 'per',
  keyGenerator: 'descriptors',
  handler: 'onDenied',
  message: 'onDenied',
  statusCode: 'onDenied',
  onLimitReached: 'observer',
  standardHeaders: 'headers',
  legacyHeaders: 'headers',
  allowList: 'skip',
  whitelist: 'skip',
};

/**
 * `unknown option "timeoutMS" (did you mean "timeoutMs"?)`; another library's name gives ours
 * (`windowMs`: `per`, with the shorthand).
 */
function unknownOption(key: string): string {
  const hint = Object.hasOwn(FOREIGN_OPTIONS, key)
    ? FOREIGN_OPTIONS[key]
    : closest(key, Object.keys(rateLimitOptionsSchema.shape));
  if (hint === undefined) return `unknown option "${key}"`;
  const example = hint === 'limit' || hint === 'per' ? `, as in ${SHORTHAND}` : '';
  return `unknown option "${key}" (did you mean "${hint}"?${example})`;
}

function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => {
      const name = issue.path.map(String).join('.');
      if (issue.code === 'unrecognized_keys' && name === 'decisionLog')
        return `option "${name}": ${issue.keys.map((key) => unknownName(key, SAMPLE_NAMES)).join('; ')}`;
      if (issue.code === 'unrecognized_keys') return issue.keys.map(unknownOption).join('; ');
      const message = issue.message.charAt(0).toLowerCase() + issue.message.slice(1);
      return name ? `option "${name}": ${message}` : message;
    })
    .join('; ');
}
