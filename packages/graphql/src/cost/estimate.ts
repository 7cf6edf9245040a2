import type { DocumentNode, VariableDefinitionNode } from 'graphql';
import type { TypePlan } from './plan.js';
import type { CostEstimate, OperationFacts } from './types.js';

/*
 * The estimate handed back: plain public fields, and (private) the plan and coerced variables it came from, so
 * that `actual` walks the result along the very selections the estimate priced.
 */

/** What an estimate was priced from. */
export interface EstimateSource {
  readonly plan: TypePlan;
  /** The variables as coerced for the estimate. */
  readonly variables: Readonly<Record<string, unknown>>;
  /** The request's variables as given (to tell whether `actual` was handed the same). */
  readonly given: unknown;
  readonly definitions: readonly VariableDefinitionNode[];
}

export class Estimate implements CostEstimate {
  readonly ok = true as const;
  readonly #source: EstimateSource;

  constructor(
    readonly cost: number,
    readonly fieldCost: number,
    readonly typeCost: number,
    readonly operation: OperationFacts,
    readonly document: DocumentNode,
    source: EstimateSource,
  ) {
    this.#source = source;
  }

  /** What an estimate this module made was priced from; undefined for any other object. */
  static sourceOf(estimate: CostEstimate): EstimateSource | undefined {
    return estimate instanceof Estimate ? estimate.#source : undefined;
  }
}
