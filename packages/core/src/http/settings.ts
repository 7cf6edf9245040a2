import { type ChallengeSetup, challengeSetup } from '../escalation/index.js';
import type { DescriptorSettings } from '../request/descriptors.js';
import type { NoticeSettings } from './notices.js';
import { type RateLimitOptions, type ResolvedOptions, resolveOptions } from './options.js';

/*
 * The options of `createHttpLimiter`, checked and resolved once, at construction: the whole tree (the
 * `challenge` option's fields included) in one pass, each wrong or unknown name named there. What comes out
 * is frozen, and each layer below is handed its own part of it, never the bag.
 */

/** What the engine is built from (rules-option.ts): the rules, their stores and what they report to. */
export type LimiterSettings<Req> = Pick<
  ResolvedOptions<Req>,
  | 'rules'
  | 'limit'
  | 'per'
  | 'key'
  | 'algorithm'
  | 'store'
  | 'localStore'
  | 'regions'
  | 'watch'
  | 'clock'
  | 'timeoutMs'
  | 'keySecret'
  | 'dryRun'
  | 'lists'
  | 'logger'
  | 'silence'
  | 'decisionLog'
  | 'observer'
>;

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

/**
 * Checks and resolves every option once; throws a ConfigError naming each wrong one (an unknown name with a
 * did-you-mean).
 */
export function resolveSettings<Req, O extends RateLimitOptions<Req>>(
  given: O | undefined,
): HttpSettings<Req, O> {
  const options = Object.freeze(resolveOptions<Req, O>(given));
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
    limiter: options,
    descriptors: Object.freeze(descriptors),
    notices: Object.freeze(silence === undefined ? { logger } : { logger, silence }),
    challenge: challengeSetup(options.challenge),
    clock: options.clock ?? Date.now,
    log: decisionLog === undefined ? undefined : logger.info?.bind(logger),
  });
}
