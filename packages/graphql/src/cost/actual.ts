import { amount, type EvalContext } from './dyn.js';
import type { Costs } from './evaluate.js';
import type { FieldPlan, SelectionPlan, TypePlan } from './plan.js';

/*
 * Query Response Analysis (spec §5.1.3): the same formula over the result. A field whose key is in the data ran
 * once per object it is on and weighs its weight; what it returned counts by its real list sizes. A null
 * produced nothing below it (a null list, no items); a key missing (skipped, or cut off by an error above)
 * costs nothing. An object of an abstract type is priced as its __typename says when the query asked for it,
 * else as the heaviest type it may be (the spec's upper bound). The walk follows the plan, whose depth
 * bounds.ts bounded, and reads each value of the data once per type it may be.
 */

interface Tally {
  field: number;
  type: number;
}

interface Walk {
  readonly context: EvalContext;
  /** Selections priced for an object whose type the data does not tell: each candidate type reads it once. */
  readonly memo: WeakMap<object, Map<SelectionPlan, Costs>>;
}

/** The costs of an operation's result data. */
export function actualCosts(root: TypePlan, context: EvalContext, data: unknown): Costs {
  const tally: Tally = { field: 0, type: 0 };
  if (isObject(data)) addType(root, data, { context, memo: new WeakMap() }, tally);
  return tally;
}

function addType(plan: TypePlan, data: Readonly<Record<string, unknown>>, walk: Walk, tally: Tally): void {
  tally.type += plan.weight;
  for (const field of plan.fields) {
    if (!Object.hasOwn(data, field.key)) continue;
    tally.field += Math.max(0, amount(field.weight, walk.context));
    addValue(field, data[field.key], field.listDepth, walk, tally);
  }
}

function addValue(field: FieldPlan, value: unknown, lists: number, walk: Walk, tally: Tally): void {
  if (value === null || value === undefined) return;
  if (lists > 0 && Array.isArray(value)) {
    for (const item of value) addValue(field, item, lists - 1, walk, tally);
  } else if (field.child === undefined) {
    tally.type += field.leafWeight;
  } else if (isObject(value)) {
    addSelection(field.child, value, walk, tally);
  }
}

function addSelection(
  plan: SelectionPlan,
  data: Readonly<Record<string, unknown>>,
  walk: Walk,
  tally: Tally,
): void {
  const candidates = plan.types.length === 1 ? plan.types : candidatesFor(plan, data);
  if (candidates.length === 1) {
    addType(candidates[0]!, data, walk, tally);
    return;
  }
  let known = walk.memo.get(data)?.get(plan);
  if (known === undefined) {
    let field = 0;
    let type = 0;
    for (const candidate of candidates) {
      const trial: Tally = { field: 0, type: 0 };
      addType(candidate, data, walk, trial);
      field = Math.max(field, trial.field);
      type = Math.max(type, trial.type);
    }
    known = { field, type };
    const byPlan = walk.memo.get(data) ?? new Map<SelectionPlan, Costs>();
    byPlan.set(plan, known);
    walk.memo.set(data, byPlan);
  }
  tally.field += known.field;
  tally.type += known.type;
}

/** The type its __typename names; else every type whose fields are the object's keys (none fit: all). */
function candidatesFor(plan: SelectionPlan, data: Readonly<Record<string, unknown>>): readonly TypePlan[] {
  for (const type of plan.types) {
    for (const key of type.typename) if (data[key] === type.object.name) return [type];
  }
  const keys = Object.keys(data);
  const fitting = plan.types.filter((type) =>
    keys.every((key) => type.typename.includes(key) || type.fields.some((field) => field.key === key)),
  );
  return fitting.length > 0 ? fitting : plan.types;
}

function isObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
