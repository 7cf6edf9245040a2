import { ConfigError, checkOptionNames, type HeaderFormat, type Limiter } from '@sluice/core';
import type { Pricing, UnitSettings } from './budget.js';
import type { CostEstimator } from './cost/index.js';
import { ThrottleStatuses } from './responses.js';

/** Where notices go (a misconfiguration seen at run time, a limiter failure). Default `console`. */
export interface GraphqlLogger {
  warn(message: string): void;
}

/** Options every GraphQL budget takes, standalone or inside an adapter. */
export interface BudgetOptions {
  /** The cost estimator of the schema (`costEstimator(schema)`). */
  readonly estimator: CostEstimator;
  /**
   * Most points one operation may be estimated at: above it the operation is refused before execution
   * (`COST_ESTIMATED_TOO_EXPENSIVE`, no resolver runs, nothing charged). Default: no maximum.
   */
  readonly maxCost?: number;
  /** The HTTP status of a throttled operation: 429 (default) or 200 (the error in a 200, as Shopify does). */
  readonly throttledStatus?: 429 | 200;
  /** Whether responses carry `extensions.cost` (requested, actual, throttle status). Default true. */
  readonly extensions?: boolean;
  readonly logger?: GraphqlLogger;
}

/** The app's descriptors (an API key, a tenant), merged with the GraphQL ones; may be async. */
export type DescriptorsHook<Ctx> = (
  ctx: Ctx,
) => Readonly<Record<string, DescriptorValue>> | Promise<Readonly<Record<string, DescriptorValue>>>;

/** A descriptor value the app may give; numbers and booleans are stringified, undefined left out. */
export type DescriptorValue = string | number | boolean | undefined;

/** Standalone: the plugin decides each operation (or batch) itself, with `limiter.check`. */
export interface StandaloneOptions<Ctx> extends BudgetOptions {
  /** The limiter whose rules hold the budgets (`createLimiter({rules, store})`). */
  readonly limiter: Pick<Limiter, 'check' | 'settle'>;
  /** A batch (an array body): each operation decided on its own (`each`, default) or all as one (`whole`). */
  readonly batch?: 'each' | 'whole';
  /** The app's descriptors, merged with the GraphQL ones (the app's win). */
  readonly descriptors?: DescriptorsHook<Ctx>;
  /** Which RateLimit header fields responses carry, as the adapters' `headers` option. Default `draft`. */
  readonly headers?: HeaderFormat;
}

/** The budget's settings, checked once. */
export interface BudgetSettings extends Pricing, UnitSettings {
  readonly logger: GraphqlLogger;
}

const BUDGET_NAMES = ['estimator', 'maxCost', 'throttledStatus', 'extensions', 'logger'] as const;
export const STANDALONE_NAMES = [...BUDGET_NAMES, 'limiter', 'batch', 'descriptors', 'headers'] as const;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null;
const hasMethods = (value: unknown, names: readonly string[]): boolean =>
  isObject(value) && names.every((name) => typeof value[name] === 'function');

/** Checks the options every budget shares, at construction; throws a ConfigError naming `owner`. */
export function budgetSettings(
  owner: string,
  options: Omit<BudgetOptions, 'estimator'> & { readonly estimator?: unknown },
  known: readonly string[],
): BudgetSettings {
  if (!isObject(options)) throw new ConfigError(`${owner}: options must be an object`);
  checkOptionNames(owner, options, known);
  const { estimator, maxCost, throttledStatus = 429, extensions = true, logger = console } = options;
  const wrong = (name: string, what: string, value: unknown) =>
    new ConfigError(
      `${owner}: option "${name}" must be ${what}, not ${JSON.stringify(value) ?? String(value)}`,
    );
  if (!hasMethods(estimator, ['estimate', 'actual']))
    throw wrong('estimator', 'a cost estimator: costEstimator(schema)', typeof estimator);
  if (maxCost !== undefined && (!Number.isInteger(maxCost) || maxCost < 0))
    throw wrong('maxCost', 'a whole number of points >= 0', maxCost);
  if (throttledStatus !== 429 && throttledStatus !== 200)
    throw wrong('throttledStatus', '429 or 200', throttledStatus);
  if (typeof extensions !== 'boolean') throw wrong('extensions', 'true or false', extensions);
  if (!hasMethods(logger, ['warn'])) throw wrong('logger', 'an object with warn(message)', typeof logger);
  return {
    estimator: estimator as CostEstimator,
    maxCost,
    throttledStatus,
    extensions,
    logger,
    statuses: new ThrottleStatuses(),
  };
}

/** Checks the standalone options beyond the shared ones. */
export function checkStandalone<Ctx>(owner: string, options: StandaloneOptions<Ctx>): void {
  const wrong = (name: string, what: string) => new ConfigError(`${owner}: option "${name}" must be ${what}`);
  if (!hasMethods(options.limiter, ['check', 'settle']))
    throw wrong('limiter', 'a limiter: createLimiter({rules, store})');
  if (options.batch !== undefined && options.batch !== 'each' && options.batch !== 'whole')
    throw wrong('batch', `'each' or 'whole', not ${JSON.stringify(options.batch)}`);
  if (options.descriptors !== undefined && typeof options.descriptors !== 'function')
    throw wrong('descriptors', 'a function of the request');
  if (options.headers !== undefined && typeof options.headers !== 'string')
    throw wrong('headers', "a header format ('draft', 'draft-7', 'legacy', 'none', ...)");
}

/** A notice logged once per episode: said when it starts, said again only after `clear`. */
export class Notice {
  #said = false;
  constructor(
    private readonly logger: GraphqlLogger,
    private readonly message: string,
  ) {}

  say(detail?: string): void {
    if (this.#said) return;
    this.#said = true;
    this.logger.warn(detail === undefined ? this.message : `${this.message}: ${detail}`);
  }

  clear(): void {
    this.#said = false;
  }
}
