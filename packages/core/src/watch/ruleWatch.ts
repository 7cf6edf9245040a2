import type { RuleResult } from '../observe/contract.js';
import type { CompiledRule, Mode } from '../rules/contract.js';
import { hashText } from '../store/tags.js';
import type { BoardKey, BoardRates, BoardRoute, BoardRule, BoardSketch } from './board.js';
import { SpaceSaving } from './spaceSaving.js';

/** What a request came to under one rule, as a small number (a batch keeps them in a byte array). */
export const ALLOWED = 0;
export const DENIED = 1;
export const SHADOW_DENIED = 2;
export const FAILED_OPEN = 3;

/** A rule's result as an outcome: denied (enforced), shadow denied, let through by a store failure, or allowed. */
export function outcomeOf(result: RuleResult): number {
  if (!result.allowed) return DENIED;
  if (result.shadowDenied) return SHADOW_DENIED;
  return result.failed ? FAILED_OPEN : ALLOWED;
}

/** Routes a rule tells apart (the rest are lumped under `(other)`), and the index of `(other)`. */
export const MAX_ROUTES = 64;

/** A rule's version on the board: 8 characters of the hash of its compiled definition. */
export function ruleVersion(rule: CompiledRule): string {
  return hashText(JSON.stringify(rule)).slice(0, 8);
}

/** The counts at the last interval's end, from which the next interval's rates are taken. */
interface Baseline {
  requests: number;
  denied: number;
  shadowDenied: number;
  keys: Map<string, number>;
  denials: Map<string, number>;
}

const NO_BASELINE = (): Baseline => ({
  requests: 0,
  denied: 0,
  shadowDenied: 0,
  keys: new Map(),
  denials: new Map(),
});

/** One rule's watch in one process: its counts, per route, and the sketches of its heaviest keys. */
export class RuleWatch {
  readonly name: string;
  version = '';
  mode: Mode = 'enforce';
  readonly keys: SpaceSaving;
  readonly denials: SpaceSaving;
  requests = 0;
  denied = 0;
  shadowDenied = 0;
  failedOpen = 0;
  /** Requests and denials by route index (see HotKeys' route table); the last slot is `(other)`. */
  readonly routeRequests = new Float64Array(MAX_ROUTES + 1);
  readonly routeDenied = new Float64Array(MAX_ROUTES + 1);
  #baseline = NO_BASELINE();

  constructor(name: string, capacity: number) {
    this.name = name;
    this.keys = new SpaceSaving(capacity);
    this.denials = new SpaceSaving(capacity);
  }

  /** One request this rule decided, on key `tag`, with `outcome` (see {@link outcomeOf}), on route index `route`. */
  saw(tag: string, outcome: number, route: number): void {
    this.requests++;
    this.keys.offer(tag);
    if (route >= 0) this.routeRequests[route] = this.routeRequests[route]! + 1;
    if (outcome === ALLOWED) return;
    if (outcome === FAILED_OPEN) {
      this.failedOpen++;
      return;
    }
    if (outcome === DENIED) this.denied++;
    else this.shadowDenied++;
    this.denials.offer(tag);
    if (route >= 0) this.routeDenied[route] = this.routeDenied[route]! + 1;
  }

  /** The rule as the board shows it, with rates over the `seconds` since the baseline. */
  view(seconds: number, routeNames: readonly string[]): BoardRule {
    const base = this.#baseline;
    // Two decimals: the board is JSON, read by people.
    const rate = (now: number, then: number) =>
      seconds > 0 ? Math.round((Math.max(0, now - then) / seconds) * 100) / 100 : 0;
    const rates: BoardRates = {
      requests: rate(this.requests, base.requests),
      denied: rate(this.denied, base.denied),
      shadowDenied: rate(this.shadowDenied, base.shadowDenied),
    };
    return {
      rule: this.name,
      version: this.version,
      mode: this.mode,
      requests: this.requests,
      denied: this.denied,
      shadowDenied: this.shadowDenied,
      failedOpen: this.failedOpen,
      rates,
      keys: sketchView(this.keys, base.keys, rate),
      denials: sketchView(this.denials, base.denials, rate),
      routes: this.#routes(routeNames),
    };
  }

  /** The interval ends: the next rates are taken from the counts now. */
  rebase(): void {
    this.#baseline = {
      requests: this.requests,
      denied: this.denied,
      shadowDenied: this.shadowDenied,
      keys: new Map(this.keys.entries().map((e) => [e.tag, e.count])),
      denials: new Map(this.denials.entries().map((e) => [e.tag, e.count])),
    };
  }

  /** The window ends: every count starts again from zero. */
  clear(): void {
    this.keys.clear();
    this.denials.clear();
    this.requests = 0;
    this.denied = 0;
    this.shadowDenied = 0;
    this.failedOpen = 0;
    this.routeRequests.fill(0);
    this.routeDenied.fill(0);
    this.#baseline = NO_BASELINE();
  }

  #routes(names: readonly string[]): BoardRoute[] {
    const routes: BoardRoute[] = [];
    for (let i = 0; i < this.routeRequests.length; i++) {
      const requests = this.routeRequests[i]!;
      if (requests > 0)
        routes.push([i === MAX_ROUTES ? '(other)' : names[i]!, requests, this.routeDenied[i]!]);
    }
    return routes;
  }
}

/** A sketch as published, each key's rate taken from its count at the baseline (or its error when new). */
function sketchView(
  sketch: SpaceSaving,
  baseline: ReadonlyMap<string, number>,
  rate: (now: number, then: number) => number,
): BoardSketch {
  const keys: BoardKey[] = sketch
    .entries()
    .map((e) => [e.tag, e.count, e.error, rate(e.count, baseline.get(e.tag) ?? e.error)]);
  return { total: sketch.total, capacity: sketch.capacity, floor: sketch.floor, keys };
}
