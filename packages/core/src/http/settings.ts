import { problemGatherer } from '../base/optionNames.js';
import { type ChallengeSetup, challengeSetup } from '../escalation/index.js';
import { regionSettings } from '../regions/index.js';
import type { DescriptorSettings } from '../request/descriptors.js';
import { watchSettings } from '../watch/options.js';
import type { NoticeSettings } from './notices.js';
import { type RateLimitOptions, type ResolvedOptions, resolveOptions } from './options.js';

/*
 * The options of `createHttpLimiter`, checked and resolved once, at construction: the whole tree (the
 * `challenge` option's fields included) in one pass, each wrong or unknown name named there. What comes out
 * is frozen, and each layer below is handed its own part of it, never the bag.
 */

/** The options the engine is built from (rules-option.ts): the rules, their stores and what they report to. */
const LIMITER_PART = [
  'rules',
  'limit',
  'per',
  'key',
  'algorithm',
  'store',
  'localStore',
  'regions',
  'watch',
  'clock',
  'timeoutMs',
  'keySecret',
  'dryRun',
  'lists',
  'logger',
  'silence',
  'decisionLog',
  'observer',
] as const satisfies readonly (keyof ResolvedOptions<unknown>)[];

export type LimiterSettings<Req> = Pick<ResolvedOptions<Req>, (typeof LIMITER_PART)[number]>;

/** The given options of `names`, copied and frozen: a layer's part, not the bag. */
function partOf<T extends object, K extends keyof T>(whole: T, names: readonly K[]): Pick<T, K> {
  const part: Partial<Pick<T, K>> = {};
  for (const name of names) if (whole[name] !== undefined) part[name] = whole[name];
  return Object.freeze(part) as Pick<T, K>;
}

/** Every part, resolved once. */
export interface HttpSettings<Req, O extends RateLimitOptions<Req>> {
  /** The options with defaults filled in, frozen: the request flow's hooks, and what the adapter reads. */
  readonly options: Readonly<O & ResolvedOptions<Req>>;
  readonly limiter: LimiterSettings<Req>;
  /** How descriptors are built (request/descriptors.ts). */
  readonly descriptors: DescriptorSettings;
  /** Which start-up notices may be given, and where (notices.ts); `rawKeys` and the adapter's part aside. */
  readonly notices: Pick<NoticeSettings, 'logger' | 'silence'>;
  /** The `challenge` option, checked; undefined when not given. */
  readonly challenge: ChallengeSetup | undefined;
  readonly clock: () => number;
  /** The decision log's `info`, when `decisionLog` is on: stage and challenge lines go there. */
  readonly log: ((entry: object) => void) | undefined;
}

const isObject = (value: unknown): value is object => typeof value === 'object' && value !== null;

/**
 * Checks and resolves every option once, the whole tree in one pass; throws one ConfigError naming each wrong
 * one, wherever it is (an unknown name with a did-you-mean).
 */
export function resolveSettings<Req, O extends RateLimitOptions<Req>>(
  given: O | undefined,
): HttpSettings<Req, O> {
  const gather = problemGatherer();
  const resolved = gather(() => resolveOptions<Req, O>(given));
  const { challenge, regions, watch } = (given ?? {}) as RateLimitOptions<Req>;
  const setup = gather(() => challengeSetup(challenge));
  // Checked in the same pass; createLimiter, a public entry taking them as given, resolves them again for itself.
  if (isObject(regions)) gather(() => regionSettings(regions));
  if (isObject(watch)) gather(() => watchSettings(watch));
  gather.done();
  const options = Object.freeze(resolved as O & ResolvedOptions<Req>);
  const { logger, decisionLog, silence } = options;
  const descriptors: DescriptorSettings = {
    ipv6Subnet: options.ipv6Subnet,
    caseSensitiveRoutes: options.caseSensitiveRoutes,
    apiKeyHeader: options.apiKeyHeader,
    maxValueLength: options.maxValueLength,
    retryHeader: options.retryHeader,
    ...(options.addressDescriptors === undefined ? {} : { addressDescriptors: options.addressDescriptors }),
  };
  return Object.freeze({
    options,
    limiter: partOf(options, LIMITER_PART),
    descriptors: Object.freeze(descriptors),
    notices: Object.freeze(silence === undefined ? { logger } : { logger, silence }),
    challenge: setup,
    clock: options.clock ?? Date.now,
    log: decisionLog === undefined ? undefined : logger.info?.bind(logger),
  });
}
