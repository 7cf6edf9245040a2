import { ConfigError } from '../base/errors.js';
import { isThenable } from '../base/maybe.js';
import { checkOptionNames } from '../base/optionNames.js';
import { type CompileOptions, compileRules, type RulesInput } from './compile.js';
import type { CompiledRules, RulesSource } from './contract.js';
import {
  loadRules,
  loadRulesSync,
  PARSE_OPTION_NAMES,
  type ParseOptions,
  type RulesDocument,
} from './parse.js';

/** Anything adapters accept as `rules`. */
export type RulesLike = string | RulesInput | RulesDocument | CompiledRules;

/** Options for resolveRules: `source` labels problems in rules given in code; `today` judges review dates. */
export type ResolveOptions = CompileOptions & Omit<ParseOptions, 'source'>;

/** True for a compiled rule table (from this or another copy of @sluice/core): checked by shape. */
export function isCompiledRules(value: unknown): value is CompiledRules {
  if (typeof value !== 'object' || value === null) return false;
  const table = value as Partial<Record<keyof CompiledRules, unknown>>;
  return (
    typeof table.domain === 'string' &&
    typeof table.version === 'string' &&
    Array.isArray(table.rules) &&
    typeof table.match === 'function'
  );
}

/** True for rules that reload (a watched file, rules distributed through Redis): anything with subscribe(). */
export function isRulesSource(value: unknown): value is RulesSource {
  return typeof (value as Partial<RulesSource> | null | undefined)?.subscribe === 'function';
}

/**
 * What adapters accept as `rules`: a path to a YAML file (loaded and compiled), rules as an object (compiled),
 * or a compiled table (returned as is). Throws RulesError for invalid rules, ConfigError for anything else.
 */
export async function resolveRules(input: RulesLike, options: ResolveOptions = {}): Promise<CompiledRules> {
  checkOptionNames('resolveRules', options, PARSE_OPTION_NAMES);
  if (typeof input === 'string') return compileRules(await loadRules(input, options));
  return resolveLoaded(input, options);
}

/** resolveRules for synchronous start-up code: a path is read with readFileSync. */
export function resolveRulesSync(input: RulesLike, options: ResolveOptions = {}): CompiledRules {
  checkOptionNames('resolveRulesSync', options, PARSE_OPTION_NAMES);
  if (typeof input === 'string') return compileRules(loadRulesSync(input, options));
  return resolveLoaded(input, options);
}

/**
 * Throws a ConfigError for rules given as a promise: in plain JavaScript a missing `await` (on redisRules(...),
 * resolveRules(...)) would otherwise read as rules with no `rules` field.
 */
export function assertNotPromise(input: unknown): void {
  if (isThenable(input))
    throw new ConfigError('rules is a Promise: did you forget await? (rules: await redisRules(...))');
}

function resolveLoaded(input: unknown, options: CompileOptions): CompiledRules {
  assertNotPromise(input);
  if (isCompiledRules(input)) return input;
  if (typeof input === 'object' && input !== null)
    return compileRules(input as RulesInput, options.source === undefined ? {} : { source: options.source });
  throw new ConfigError('rules must be a file path, a rules object ({domain, rules}) or a compiled table');
}
