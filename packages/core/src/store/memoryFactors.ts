import type { FactorReport, FactorStore } from './contract.js';
import { adaptFactor, type FactorState } from './factors.js';

/**
 * Adaptive factors in this process: what MemoryStore shares (between the limiters of one process) and what
 * a limiter uses when its store cannot share them. Answers at once, with no promise. One entry per rule id.
 */
export class MemoryFactors implements FactorStore {
  readonly #states = new Map<string, FactorState>();

  adaptFactor(report: FactorReport, now: number): number {
    const next = adaptFactor(this.#states.get(report.id), report, now);
    this.#states.set(report.id, next);
    return next.factor;
  }
}
