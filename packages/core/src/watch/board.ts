/**
 * What a gateway publishes to the store's board every interval, and what `limiter.hotKeys()` answers: per rule,
 * its counts, rates and the sketches of its heaviest keys (hashed counter tags only), and the gateway's store
 * health. Readers merge the boards of every gateway (merge.ts).
 */

import type { Mode } from '../rules/contract.js';

/** The board's format; a reader skips a board of another format (a gateway of an older or newer release). */
export const BOARD_FORMAT = 1;

/** One key of a sketch: tag, count (at most `error` over the truth), error, and its rate over the last interval. */
export type BoardKey = readonly [tag: string, count: number, error: number, perSecond: number];

/** A sketch as published: N keys offered, k counters, the floor (a key not listed was seen at most this often). */
export interface BoardSketch {
  readonly total: number;
  readonly capacity: number;
  readonly floor: number;
  /** Highest count first. */
  readonly keys: readonly BoardKey[];
}

/** Requests, denials (enforced) and shadow denials per second over the last interval. */
export interface BoardRates {
  readonly requests: number;
  readonly denied: number;
  readonly shadowDenied: number;
}

/** One route of a rule: its requests and denials (enforced and shadow) since the window began. */
export type BoardRoute = readonly [route: string, requests: number, denied: number];

/** A rule as one gateway saw it since its window began. */
export interface BoardRule {
  readonly rule: string;
  /** A short hash of the compiled rule: two gateways running different definitions of it differ here. */
  readonly version: string;
  readonly mode: Mode;
  readonly requests: number;
  /** Enforced denials (a 429 or 503 by this rule). */
  readonly denied: number;
  /** Denials a shadow rule (or a key outside a rollout) would have made. */
  readonly shadowDenied: number;
  /** Requests let through because the store failed. */
  readonly failedOpen: number;
  readonly rates: BoardRates;
  /** Heaviest keys by requests. */
  readonly keys: BoardSketch;
  /** Heaviest keys by denials, enforced and shadow. */
  readonly denials: BoardSketch;
  readonly routes: readonly BoardRoute[];
}

/** The gateway's store as it saw it over the last interval. */
export interface BoardStoreHealth {
  readonly connected: boolean;
  readonly breaker: 'closed' | 'open' | 'half_open';
  /** Epoch ms since which calls fail open; null when healthy. */
  readonly failingOpenSince: number | null;
  /** Remote store calls timed over the interval (0 on a store that answers in process). */
  readonly calls: number;
  /** Their mean and longest time, ms; null without calls. */
  readonly meanMs: number | null;
  readonly maxMs: number | null;
  /** Store failures over the interval. */
  readonly errors: number;
}

/** Who published a board, when, and its store's health: a board without its rules (as mergeBoards lists each). */
export interface GatewaySummary {
  readonly gateway: string;
  readonly domain: string;
  /** The rules version (content hash) the gateway runs. */
  readonly version: string;
  /** When this board was made, epoch ms (the gateway's clock). */
  readonly at: number;
  /** When its window began: counts and sketches cover [since, at]. */
  readonly since: number;
  /** The span the rates cover, ms (the publishing interval; since `since` when not publishing). */
  readonly intervalMs: number;
  readonly store: BoardStoreHealth;
}

/** One gateway's board. */
export interface GatewayBoard extends GatewaySummary {
  readonly format: typeof BOARD_FORMAT;
  readonly rules: readonly BoardRule[];
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A board read back from a store, or undefined when the text is not one this reader understands (another
 * format, or not a board): a reader shows the others rather than failing on one gateway.
 */
export function parseBoard(text: string): GatewayBoard | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(value) || value.format !== BOARD_FORMAT) return undefined;
  const { gateway, domain, version, at, since, rules, store } = value;
  if (typeof gateway !== 'string' || typeof domain !== 'string' || typeof version !== 'string')
    return undefined;
  if (typeof at !== 'number' || typeof since !== 'number' || !Array.isArray(rules) || !isObject(store))
    return undefined;
  if (!rules.every(isBoardRule)) return undefined;
  return value as unknown as GatewayBoard;
}

function isSketch(value: unknown): value is BoardSketch {
  return (
    isObject(value) &&
    typeof value.total === 'number' &&
    typeof value.floor === 'number' &&
    Array.isArray(value.keys) &&
    value.keys.every(
      (key) =>
        Array.isArray(key) &&
        typeof key[0] === 'string' &&
        typeof key[1] === 'number' &&
        typeof key[2] === 'number',
    )
  );
}

function isBoardRule(value: unknown): boolean {
  return (
    isObject(value) &&
    typeof value.rule === 'string' &&
    typeof value.requests === 'number' &&
    typeof value.denied === 'number' &&
    isSketch(value.keys) &&
    isSketch(value.denials) &&
    Array.isArray(value.routes)
  );
}
