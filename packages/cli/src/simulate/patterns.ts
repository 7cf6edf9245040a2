/** Traffic shapes `sluice simulate` generates. */
export const PATTERNS = ['steady', 'burst', 'ramp', 'many-keys', 'hot-key', 'retry-storm'] as const;

/** One of {@link PATTERNS}. */
export type PatternName = (typeof PATTERNS)[number];

/** What a pattern is made of: a request rate over time, who sends each request, and whether the denied retry. */
export interface Pattern {
  /** Requests per second at `t` ms into the run. */
  rate(t: number): number;
  /** The client (0-based) sending the `n`-th new request. */
  client(n: number, random: () => number): number;
  /** Retries of a denied request: how many, and the wait before each (ms). None for most patterns. */
  readonly retries: { readonly max: number; waitMs(random: () => number): number } | undefined;
}

/** The numbers a pattern is built from. */
export interface PatternSettings {
  /** Base rate over all clients, per second. */
  readonly rps: number;
  /** Clients (distinct keys) in the population. */
  readonly keys: number;
  readonly durationMs: number;
}

/** The share of requests the hot key sends in `hot-key`. */
export const HOT_SHARE = 0.5;
/** `burst`: the rate multiplies by this for a tenth of the run, in its middle. */
export const BURST_FACTOR = 10;

const anyClient = (keys: number) => (_n: number, random: () => number) => Math.floor(random() * keys);

/**
 * - steady: `rps` all along, clients uniform;
 * - burst: 10x `rps` for the middle tenth of the run;
 * - ramp: from a tenth of `rps` to 3x `rps`, linearly (a slow launch-day climb);
 * - many-keys: every request from a new client (key cardinality, counter memory);
 * - hot-key: half of the requests from client 0, the rest uniform;
 * - retry-storm: a denied client retries after 100-500 ms, ignoring Retry-After, up to 10 times.
 */
export function patternOf(name: PatternName, settings: PatternSettings): Pattern {
  const { rps, keys, durationMs } = settings;
  const uniform: Pattern = { rate: () => rps, client: anyClient(keys), retries: undefined };
  switch (name) {
    case 'steady':
      return uniform;
    case 'burst':
      return {
        ...uniform,
        rate: (t) => (t >= durationMs * 0.45 && t < durationMs * 0.55 ? rps * BURST_FACTOR : rps),
      };
    case 'ramp':
      return { ...uniform, rate: (t) => rps * (0.1 + 2.9 * (t / durationMs)) };
    case 'many-keys':
      return { ...uniform, client: (n) => n };
    case 'hot-key':
      return {
        ...uniform,
        client: (_n, random) => (random() < HOT_SHARE ? 0 : 1 + Math.floor(random() * Math.max(1, keys - 1))),
      };
    case 'retry-storm':
      return { ...uniform, retries: { max: 10, waitMs: (random) => 100 + random() * 400 } };
  }
}
