import { ConfigError, checkOptionNames } from '@sluice/core';
import type { EstimatorOptions } from './types.js';

/** The estimator's options, checked once and resolved with their defaults. */
export interface Settings {
  readonly defaultListSize: number;
  readonly maxDepth: number;
  readonly maxFields: number;
  readonly maxTokens: number;
  readonly cacheSize: number;
  readonly introspection: 'free' | 'priced' | 'forbidden';
  readonly costOf: 'both' | 'fields' | 'types';
}

export const DEFAULTS: Settings = {
  defaultListSize: 10,
  maxDepth: 64,
  maxFields: 10_000,
  maxTokens: 20_000,
  cacheSize: 1_000,
  introspection: 'free',
  costOf: 'both',
};

/** graphql-js's parser recurses once per level and overflows between 1,000 and 2,000: bounds.ts keeps it far off. */
const DEEPEST = 200;

export function settingsOf(options: EstimatorOptions | undefined): Settings {
  checkOptionNames('costEstimator', options, Object.keys(DEFAULTS));
  const given = { ...DEFAULTS, ...definedOnly(options ?? {}) };
  integer('defaultListSize', given.defaultListSize, 0, Number.MAX_SAFE_INTEGER);
  integer('maxDepth', given.maxDepth, 1, DEEPEST);
  integer('maxFields', given.maxFields, 1, Number.MAX_SAFE_INTEGER);
  integer('maxTokens', given.maxTokens, 1, Number.MAX_SAFE_INTEGER);
  integer('cacheSize', given.cacheSize, 0, Number.MAX_SAFE_INTEGER);
  oneOf('introspection', given.introspection, ['free', 'priced', 'forbidden']);
  oneOf('costOf', given.costOf, ['both', 'fields', 'types']);
  return given;
}

function definedOnly(options: EstimatorOptions): EstimatorOptions {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
}

function integer(name: string, value: unknown, min: number, max: number): void {
  if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return;
  const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
  throw new ConfigError(`costEstimator: ${name} must be an integer ${range}, got ${String(value)}`);
}

function oneOf(name: string, value: unknown, allowed: readonly string[]): void {
  if (typeof value === 'string' && allowed.includes(value)) return;
  throw new ConfigError(`costEstimator: ${name} must be one of ${allowed.join(', ')}, got ${String(value)}`);
}
