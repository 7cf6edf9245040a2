import type { CostRefusal } from './types.js';

/*
 * A quantity of a compiled plan: a number when the document alone decides it, else a function of the request's
 * variables. Compiling folds every constant, so a request pays only for what its variables change.
 */

/** What evaluating a plan for one request reads and writes. */
export interface EvalContext {
  /** The request's variables, coerced by graphql-js (defaults applied). */
  readonly variables: Readonly<Record<string, unknown>>;
  /** Set by a size that breaks a @listSize rule for these variables; the estimate is then refused. */
  refusal: CostRefusal | undefined;
}

export type Dyn = number | ((context: EvalContext) => number);

export function amount(quantity: Dyn, context: EvalContext): number {
  return typeof quantity === 'number' ? quantity : quantity(context);
}

/** The sum of quantities, constants folded. */
export function sumOf(parts: readonly Dyn[]): Dyn {
  let constant = 0;
  const variable: ((context: EvalContext) => number)[] = [];
  for (const part of parts) {
    if (typeof part === 'number') constant += part;
    else variable.push(part);
  }
  if (variable.length === 0) return constant;
  if (variable.length === 1 && constant === 0) return variable[0]!;
  return (context) => {
    let total = constant;
    for (const part of variable) total += part(context);
    return total;
  };
}

/** The largest of quantities (at least one), constants folded. */
export function maxOf(parts: readonly Dyn[]): Dyn {
  if (parts.length === 1) return parts[0]!;
  if (parts.every((part) => typeof part === 'number')) return Math.max(...(parts as number[]));
  return (context) => {
    let largest = Number.NEGATIVE_INFINITY;
    for (const part of parts) largest = Math.max(largest, amount(part, context));
    return largest;
  };
}

/** a × b for quantities >= 0, where an infinite size times nothing is nothing (never NaN). */
export function times(a: number, b: number): number {
  return a === 0 || b === 0 ? 0 : a * b;
}
