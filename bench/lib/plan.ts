/** Command-line settings of a bench run: the full suite by default, `--quick` for a short one. */
import { CONTENDERS, type Framework, type LimiterKind, SCENARIOS, type Scenario } from './spec.js';

/** Every contender kind of any framework. */
const ALL_LIMITERS: readonly LimiterKind[] = [...new Set(Object.values(CONTENDERS).flat())];

/** What one run of the suite measures and for how long. */
export interface Settings {
  readonly quick: boolean;
  readonly frameworks: readonly Framework[];
  readonly scenarios: readonly Scenario[];
  readonly rounds: number;
  /** Seconds per measured run. */
  readonly durationS: number;
  /** Seconds of warm-up per server, before the first round. */
  readonly warmupS: number;
  readonly connections: number;
  /** Also measure latency at half of Sluice-on-Redis's maximum, three-rule scenario. */
  readonly halfLoad: boolean;
  /**
   * Profiled rounds of the memory contenders (one rule, the user-style file) after the measured ones: the
   * limiter's own code per request, the measure of the memory targets (see ownCode.ts).
   */
  readonly ownCode: boolean;
  /** Micro-benchmarks (rules, MemoryStore bytes, leases) besides the HTTP suite. */
  readonly micro: boolean;
  /** Pause between measured runs, ms. */
  readonly pauseMs: number;
  /** Build the packages and bench/dist first (skip with --no-build when nothing changed). */
  readonly build: boolean;
  /** Result file name in bench/results (without extension): `latest` unless `--out=name`. */
  readonly out: string;
  /** Only these contenders (`--only=none,sluice-memory,...`); every one of each framework by default. */
  readonly only?: readonly LimiterKind[];
}

const FULL: Settings = {
  quick: false,
  frameworks: ['fastify', 'express', 'koa'],
  scenarios: ['hot', 'rotating', 'user', 'three'],
  rounds: 3,
  durationS: 4,
  warmupS: 2,
  connections: 32,
  halfLoad: true,
  ownCode: true,
  micro: true,
  pauseMs: 500,
  build: true,
  out: 'latest',
};

const QUICK: Settings = {
  ...FULL,
  quick: true,
  frameworks: ['fastify', 'express'],
  scenarios: ['rotating', 'user', 'three'],
  rounds: 2,
  durationS: 1,
  warmupS: 1,
  halfLoad: false,
  ownCode: false,
  micro: false,
  pauseMs: 100,
};

function list<T extends string>(value: string, allowed: readonly T[], what: string): T[] {
  const items = value.split(',').filter(Boolean);
  for (const item of items) if (!allowed.includes(item as T)) throw new Error(`unknown ${what}: ${item}`);
  return items as T[];
}

/** Reads `--quick`, `--only=a,b`, `--frameworks=a,b`, `--scenarios=...`, `--rounds=N`, `--duration=S`, `--connections=N`, `--no-micro`, `--no-half`, `--half`, `--no-own`, `--own`, `--no-build`, `--out=name`. */
export function settingsFrom(argv: readonly string[]): Settings {
  let settings: Settings = argv.includes('--quick') ? QUICK : FULL;
  for (const arg of argv) {
    const [name, value = ''] = arg.replace(/^--/, '').split('=');
    if (name === 'frameworks')
      settings = {
        ...settings,
        frameworks: list(value, Object.keys(CONTENDERS) as Framework[], 'framework'),
      };
    else if (name === 'scenarios') settings = { ...settings, scenarios: list(value, SCENARIOS, 'scenario') };
    else if (name === 'rounds') settings = { ...settings, rounds: Number(value) };
    else if (name === 'duration') settings = { ...settings, durationS: Number(value) };
    else if (name === 'connections') settings = { ...settings, connections: Number(value) };
    else if (name === 'no-micro') settings = { ...settings, micro: false };
    else if (name === 'no-half') settings = { ...settings, halfLoad: false };
    else if (name === 'half') settings = { ...settings, halfLoad: true };
    else if (name === 'no-own') settings = { ...settings, ownCode: false };
    else if (name === 'own') settings = { ...settings, ownCode: true };
    else if (name === 'no-build') settings = { ...settings, build: false };
    else if (name === 'out' && /^[\w-]+$/.test(value)) settings = { ...settings, out: value };
    else if (name === 'only') settings = { ...settings, only: list(value, ALL_LIMITERS, 'contender') };
  }
  return settings;
}
