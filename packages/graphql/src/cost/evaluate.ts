import { amount, type EvalContext, times } from './dyn.js';
import type { SelectionPlan, TypePlan } from './plan.js';

/*
 * Static analysis for one request (spec §5.1.1): a plan's field cost and type cost for the request's
 * variables. Constant parts were folded when compiling; a plan the document alone decides costs nothing here.
 */

export interface Costs {
  readonly field: number;
  readonly type: number;
}

/** The costs of an operation's plan for one request's variables. */
export function evaluatePlan(root: TypePlan, context: EvalContext): Costs {
  if (!Number.isNaN(root.fixedField)) return { field: root.fixedField, type: root.fixedType };
  return evaluateType(root, context, new Map());
}

function evaluateType(plan: TypePlan, context: EvalContext, memo: Map<SelectionPlan, Costs>): Costs {
  if (!Number.isNaN(plan.fixedField)) return { field: plan.fixedField, type: plan.fixedType };
  let field = 0;
  let type = plan.weight;
  for (const fieldPlan of plan.fields) {
    if (!Number.isNaN(fieldPlan.fixedField)) {
      field += fieldPlan.fixedField;
      type += fieldPlan.fixedType;
      continue;
    }
    field += Math.max(0, amount(fieldPlan.weight, context));
    const items = amount(fieldPlan.size, context) ** fieldPlan.listDepth;
    if (fieldPlan.child === undefined) {
      type += times(items, fieldPlan.leafWeight);
    } else {
      const child = evaluateSelection(fieldPlan.child, context, memo);
      field += times(items, child.field);
      type += times(items, child.type);
    }
  }
  return { field, type };
}

/** The heaviest of the object types a selection may return (spec §7.2); shared selections evaluated once. */
function evaluateSelection(
  plan: SelectionPlan,
  context: EvalContext,
  memo: Map<SelectionPlan, Costs>,
): Costs {
  if (!Number.isNaN(plan.fixedField)) return { field: plan.fixedField, type: plan.fixedType };
  const known = memo.get(plan);
  if (known !== undefined) return known;
  let field = 0;
  let type = 0;
  for (const typePlan of plan.types) {
    const costs = evaluateType(typePlan, context, memo);
    field = Math.max(field, costs.field);
    type = Math.max(type, costs.type);
  }
  const costs = { field, type };
  memo.set(plan, costs);
  return costs;
}
