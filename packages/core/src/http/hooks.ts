import { ConfigError } from '../base/errors.js';
import { isThenable, type Maybe } from '../engine/storeCall.js';
import type { AdapterObserver, AdapterStage, RateLimitLogger } from './options.js';

/** Reports a failure inside the adapter: to the observer each time, to the log once per stage. */
export type AdapterReport = (error: unknown, stage: AdapterStage) => void;

/** A limiter's reporter; its own memory of the stages it has logged. */
export function adapterReporter(
  logger: RateLimitLogger,
  observer: AdapterObserver | undefined,
): AdapterReport {
  const warned = new Set<AdapterStage>();
  return function report(error, stage) {
    const failure = error instanceof Error ? error : new Error(String(error));
    try {
      observer?.onAdapterError?.(failure, stage);
    } catch {
      // An observer bug must not reach the request path either.
    }
    if (warned.has(stage)) return;
    warned.add(stage);
    logger.warn(
      `sluice: ${stage} failed (${failure.message}); requests go on without it [SLUICE_${stage.toUpperCase()}_FAILED]`,
    );
  };
}

/**
 * Runs a user hook; a throw or a rejection is reported and reads as undefined. A synchronous answer stays
 * synchronous, so a request whose hooks are all synchronous waits on no promise but the store's.
 */
export function runHook<T, A = undefined>(
  report: AdapterReport,
  stage: AdapterStage,
  call: (arg: A) => T | Promise<T>,
  arg?: A,
): Maybe<T | undefined> {
  try {
    const value = call(arg as A);
    if (!isThenable(value)) return value;
    return value.then(undefined, (error: unknown) => {
      report(error, stage);
      return undefined;
    });
  } catch (error) {
    report(error, stage);
    return undefined;
  }
}

/** The cost `cost(req)` returned when it is a whole number >= 0; else reported, and the rule's cost applies. */
export function validCost(report: AdapterReport, cost: number | undefined): number | undefined {
  if (cost === undefined || (Number.isSafeInteger(cost) && cost >= 0)) return cost;
  report(
    new ConfigError(`cost(req) returned ${String(cost)}, not a whole number >= 0; using the rule's cost`),
    'cost',
  );
  return undefined;
}
