import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AlgorithmName } from '../algorithms/index.js';
import type { CalendarPeriod, LimitParams } from '../algorithms/limits.js';
import type { Check, Store } from '../store/contract.js';

/** What one step must answer. `retryAfterMs: null` means never (Infinity). */
export interface VectorExpect {
  readonly allowed: boolean;
  readonly remaining: number;
  readonly retryAfterMs: number | null;
  readonly resetMs?: number;
  readonly delayMs?: number;
}

/** One request at `at` (epoch ms), or the release of a concurrency lease. */
export type VectorStep =
  | { readonly at: number; readonly cost: number; readonly leaseId?: string; readonly expect: VectorExpect }
  | { readonly at: number; readonly release: string };

/** A sequence of steps for one key under one set of params, as stored in the files. */
export interface StoredVectorCase {
  readonly name: string;
  readonly params: {
    readonly limit: number;
    readonly windowMs: number;
    readonly burst?: number;
    readonly period?: CalendarPeriod;
  };
  readonly steps: readonly VectorStep[];
}

/** A case with the algorithm of its file. */
export interface VectorCase extends StoredVectorCase {
  readonly algorithm: AlgorithmName;
}

/** The cases of one algorithm, from vectors/<algorithm>.json in this package. */
export interface VectorFile {
  readonly algorithm: AlgorithmName;
  readonly cases: readonly VectorCase[];
}

/** What a store or algorithm answered for one step. */
export interface StepAnswer {
  readonly allowed: boolean;
  readonly remaining: number;
  readonly retryAfterMs: number;
  readonly resetMs: number;
  readonly delayMs?: number;
}

/** A step whose answer differs from the vector. */
export interface Mismatch {
  readonly case: string;
  readonly step: number;
  readonly field: keyof VectorExpect;
  readonly expected: number | boolean | null;
  readonly actual: number | boolean | null | undefined;
}

/** The vector files, shipped beside dist (two levels up from src/testing and from dist/testing alike). */
const directory = fileURLToPath(new URL('../../vectors/', import.meta.url));

/**
 * The shared vectors: every algorithm's cases (the files in the package's `vectors/` directory), sorted by
 * algorithm; each case carries its algorithm. Run each case on a fresh counter with {@link runVectorCase}.
 */
export function loadVectors(): VectorFile[] {
  return readdirSync(directory)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => {
      const file = JSON.parse(readFileSync(`${directory}${name}`, 'utf8')) as {
        algorithm: AlgorithmName;
        cases: StoredVectorCase[];
      };
      return {
        algorithm: file.algorithm,
        cases: file.cases.map((c) => ({ ...c, algorithm: file.algorithm })),
      };
    });
}

/** The LimitParams of a case: burst defaults to the limit. */
export function paramsOf(vectorCase: Pick<StoredVectorCase, 'params'>): LimitParams {
  const { limit, windowMs, burst, period } = vectorCase.params;
  const params = { limit, windowMs, burst: burst ?? limit };
  return period === undefined ? params : { ...params, period };
}

/** Compares one answer with its expectation; fields absent from the vector are not checked. */
export function compareStep(
  name: string,
  step: number,
  expect: VectorExpect,
  answer: StepAnswer,
): Mismatch[] {
  const mismatches: Mismatch[] = [];
  const check = (
    field: keyof VectorExpect,
    expected: number | boolean | null,
    actual: number | boolean | undefined,
  ) => {
    const normalised = actual === Number.POSITIVE_INFINITY ? null : actual;
    if (normalised !== expected) mismatches.push({ case: name, step, field, expected, actual: normalised });
  };
  check('allowed', expect.allowed, answer.allowed);
  check('remaining', expect.remaining, answer.remaining);
  check('retryAfterMs', expect.retryAfterMs, answer.retryAfterMs);
  if (expect.resetMs !== undefined) check('resetMs', expect.resetMs, answer.resetMs);
  if (expect.delayMs !== undefined) check('delayMs', expect.delayMs, answer.delayMs);
  return mismatches;
}

/**
 * Drives a Store through one case, one `evaluate([check], at)` per request step and one `release` per
 * release step, all on the counter {rule, tag} (use a fresh one per case). Returns every mismatch.
 */
export async function runVectorCase(
  store: Store,
  vectorCase: VectorCase,
  counter: { rule: string; tag: string },
): Promise<Mismatch[]> {
  const { algorithm } = vectorCase;
  const params = paramsOf(vectorCase);
  const mismatches: Mismatch[] = [];
  for (const [index, step] of vectorCase.steps.entries()) {
    if ('release' in step) {
      await store.release([{ ...counter, algorithm, id: step.release, scope: 'store' }], step.at);
      continue;
    }
    const check: Check = { ...counter, algorithm, params, cost: step.cost, mode: 'enforce' };
    const [result] = await store.evaluate(
      [step.leaseId === undefined ? check : { ...check, leaseId: step.leaseId }],
      step.at,
    );
    if (result === undefined)
      throw new Error(`${vectorCase.name}: step ${index}: the store returned no result`);
    mismatches.push(...compareStep(vectorCase.name, index, step.expect, result));
  }
  return mismatches;
}
