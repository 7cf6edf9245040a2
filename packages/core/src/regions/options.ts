import { ConfigError } from '../base/errors.js';
import { checkOptionNames } from '../base/optionNames.js';
import type { Store } from '../store/contract.js';

/** Runs `run` once after `delayMs`; returns what cancels it. The default is an unref'd `setTimeout`. */
export type RegionScheduler = (run: () => void, delayMs: number) => () => void;

/** The limiter's `regions` option: this gateway's region and the store every region shares. */
export interface RegionsOptions {
  /** This gateway's region: lowercase letters, digits, `_` and `-`, at most 32 characters. */
  readonly region: string;
  /** The store every region shares: it holds the slices granted per rule, key and window, never a request. */
  readonly global: Store;
  /** Interval of the sync loop, ms: one call to the global store per gateway per round. Default 200. */
  readonly syncMs?: number;
  /** Partition share margin of rules that state none (`partition_margin`). Default 1.1. */
  readonly margin?: number;
  /**
   * The slice a region assumes before its first sync of a counter, as a share of the global limit (the
   * bound's optimistic part: at most regions × this per window). 0: none, deny until the first grant.
   * Default 0.01.
   */
  readonly firstSlice?: number;
  /**
   * Largest slice, as a share of the global limit: what one take can add to a region's grant, so what a
   * restarted global store can lose per region. Default 0.25.
   */
  readonly maxSlice?: number;
  /** Time limit of a call to a global store that does not bound its own calls, ms. Default 1000. */
  readonly timeoutMs?: number;
  /** Timers of the sync loop (simulations on virtual time); default an unref'd setTimeout. */
  readonly schedule?: RegionScheduler;
}

/** The options resolved once, at construction. */
export interface RegionSettings {
  readonly region: string;
  readonly global: Store;
  readonly syncMs: number;
  readonly margin: number;
  readonly firstSlice: number;
  readonly maxSlice: number;
  readonly timeoutMs: number;
  readonly schedule: RegionScheduler;
}

const REGION_OPTIONS: readonly (keyof RegionsOptions)[] = [
  'region',
  'global',
  'syncMs',
  'margin',
  'firstSlice',
  'maxSlice',
  'timeoutMs',
  'schedule',
];

/** A region name goes into the global store's counter names and into metric labels. */
const REGION_NAME = /^[a-z0-9_-]{1,32}$/;

/** The default scheduler: a timer that never keeps a process alive. */
const unrefTimer: RegionScheduler = (run, delayMs) => {
  const timer = setTimeout(run, delayMs);
  timer.unref?.();
  return () => clearTimeout(timer);
};

/** Checks the `regions` option once and fills its defaults; a ConfigError names what is wrong. */
export function regionSettings(options: RegionsOptions): RegionSettings {
  if (options === null || typeof options !== 'object')
    throw new ConfigError('regions must be {region, global, ...}');
  checkOptionNames('regions', options, REGION_OPTIONS);
  const { region, global } = options;
  if (typeof region !== 'string' || !REGION_NAME.test(region))
    throw new ConfigError(
      `regions.region must be a region name (lowercase letters, digits, _ and -, at most 32), got ${JSON.stringify(region)}`,
    );
  const store = global as Partial<Store> | null | undefined;
  for (const method of ['evaluate', 'release', 'close'] as const)
    if (typeof store?.[method] !== 'function')
      throw new ConfigError(`regions.global must be a store (it has no ${method}() method)`);
  if (options.schedule !== undefined && typeof options.schedule !== 'function')
    throw new ConfigError('regions.schedule must be a function (run, delayMs) => cancel');
  return {
    region,
    global,
    syncMs: number('syncMs', options.syncMs, 200, 10, 60_000),
    margin: number('margin', options.margin, 1.1, 0.01, 10),
    firstSlice: number('firstSlice', options.firstSlice, 0.01, 0, 1),
    maxSlice: number('maxSlice', options.maxSlice, 0.25, 0.001, 1),
    timeoutMs: number('timeoutMs', options.timeoutMs, 1000, 1, 600_000),
    schedule: options.schedule ?? unrefTimer,
  };
}

function number(name: string, value: number | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !(value >= min && value <= max))
    throw new ConfigError(
      `regions.${name} must be a number from ${min} to ${max}, got ${JSON.stringify(value)}`,
    );
  return value;
}
