import { hostname } from 'node:os';
import { ConfigError } from '../base/errors.js';
import { checkOptionNames } from '../base/optionNames.js';

/** The limiter's `watch` option: the heavy-hitter sketches, and publishing them for `sluice top` and the dashboard. */
export interface WatchOptions {
  /**
   * Counters per sketch (k): each rule keeps its heaviest k keys by requests and k by denials. A count is over
   * the truth by at most N/k (N: the rule's requests in the window). Default 64.
   */
  keys?: number;
  /**
   * Publish this gateway's board (tops, rates, rules version, store health) to the store every `intervalMs`:
   * one store call per interval, off the request path. Needs a store with a board (MemoryStore, RedisStore).
   * Default false.
   */
  publish?: boolean;
  /** Milliseconds between two publishes, and the span of the published rates. Default 5000. */
  intervalMs?: number;
  /** How long a published board outlives its gateway's last publish, ms. Default three intervals. */
  ttlMs?: number;
  /**
   * Counts and sketches start afresh at the first publish at least this long (ms) after their window began, so
   * the top keys are recent ones and N/k stays small. Default 600000 (10 minutes).
   */
  windowMs?: number;
  /** This gateway's name on the board (letters, digits, `._:@/-`). Default `<hostname>-<pid>`. */
  gateway?: string;
  /**
   * Count requests and denials by the `route` descriptor too (at most 64 routes, the rest as `(other)`), for
   * the dashboard's heat map. Route values are shown in clear: turn this off if yours carry identifiers.
   * Default true.
   */
  routes?: boolean;
}

/** The `watch` option, checked and filled in. */
export interface WatchSettings {
  readonly keys: number;
  readonly publish: boolean;
  readonly intervalMs: number;
  readonly ttlMs: number;
  readonly windowMs: number;
  readonly gateway: string;
  readonly routes: boolean;
}

const WATCH_OPTIONS: readonly (keyof WatchOptions)[] = [
  'keys',
  'publish',
  'intervalMs',
  'ttlMs',
  'windowMs',
  'gateway',
  'routes',
];

/** A gateway name as boards take it. */
export const GATEWAY_NAME = /^[\w.:@/-]{1,128}$/;

/** `<hostname>-<pid>`, with any character a gateway name does not take turned into `_`. */
export function defaultGateway(): string {
  return `${hostname()}-${process.pid}`.replace(/[^\w.:@/-]/g, '_').slice(0, 128);
}

function whole(name: string, value: unknown, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min)
    throw new ConfigError(`watch.${name} must be a whole number of at least ${min}, got ${String(value)}`);
  return value;
}

function flag(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new ConfigError(`watch.${name} must be true or false`);
  return value;
}

/** Checks the `watch` option once, at construction; undefined for `watch: false`. */
export function watchSettings(options: WatchOptions | false | undefined): WatchSettings | undefined {
  if (options === false) return undefined;
  if (options !== undefined && (typeof options !== 'object' || options === null))
    throw new ConfigError('watch must be an object of watch options, or false');
  checkOptionNames('createLimiter watch', options, WATCH_OPTIONS);
  const given = options ?? {};
  const intervalMs = whole('intervalMs', given.intervalMs, 5000, 100);
  const gateway = given.gateway ?? defaultGateway();
  if (typeof gateway !== 'string' || !GATEWAY_NAME.test(gateway))
    throw new ConfigError(
      `watch.gateway must be 1 to 128 letters, digits or ._:@/- characters, got ${JSON.stringify(gateway)}`,
    );
  return {
    keys: whole('keys', given.keys, 64, 1),
    publish: flag('publish', given.publish, false),
    intervalMs,
    ttlMs: whole('ttlMs', given.ttlMs, 3 * intervalMs, intervalMs),
    windowMs: whole('windowMs', given.windowMs, 600_000, intervalMs),
    gateway,
    routes: flag('routes', given.routes, true),
  };
}
