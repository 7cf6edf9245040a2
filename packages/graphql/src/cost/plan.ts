import type { GraphQLObjectType } from 'graphql';
import { type Dyn, times } from './dyn.js';

/*
 * A compiled operation: per object type, the fields graphql-js would run (response keys, merged), each with its
 * weight (field, arguments, directives), its list size and what it returns. Built once per document and set of
 * @skip/@include values; quantities the document alone decides are folded into `fixedField` / `fixedType`
 * (NaN where variables decide). Selections with the same fields share one plan (a DAG, not a tree).
 */

/** One response key of an object: a field run once per object. */
export interface FieldPlan {
  readonly key: string;
  /** The field's raw cost: its weight plus its arguments' and directives' (clamped at zero when summed). */
  readonly weight: Dyn;
  /** Items per list level (1 for a field that returns no list). */
  readonly size: Dyn;
  readonly listDepth: number;
  /** The type weight of each scalar or enum value returned (0 for composite fields). */
  readonly leafWeight: number;
  /** What runs on each object returned; undefined for scalars and enums. */
  readonly child: SelectionPlan | undefined;
  /** Field cost and type cost of this field on one object, when constant; NaN otherwise. */
  readonly fixedField: number;
  readonly fixedType: number;
  /** Field selections below and including this one, fragments expanded (list sizes not counted). */
  readonly expanded: number;
}

/** The fields that run on one object type. */
export interface TypePlan {
  readonly object: GraphQLObjectType;
  /** The type weight of one object of this type. */
  readonly weight: number;
  readonly fields: readonly FieldPlan[];
  /** Response keys of __typename, by which a result's object tells its type. */
  readonly typename: readonly string[];
  readonly fixedField: number;
  readonly fixedType: number;
  readonly expanded: number;
}

/** A selection on a field's type: one TypePlan per object type it may return (the spec's maximum over them). */
export interface SelectionPlan {
  readonly types: readonly TypePlan[];
  readonly fixedField: number;
  readonly fixedType: number;
  readonly expanded: number;
}

/** The fold of a field: constant when its weight, size and child are. */
export function fixedOfField(
  weight: Dyn,
  size: Dyn,
  listDepth: number,
  leafWeight: number,
  child: SelectionPlan | undefined,
): { fixedField: number; fixedType: number } {
  if (
    typeof weight !== 'number' ||
    typeof size !== 'number' ||
    (child !== undefined && Number.isNaN(child.fixedField))
  ) {
    return { fixedField: Number.NaN, fixedType: Number.NaN };
  }
  const items = size ** listDepth;
  return {
    fixedField: Math.max(0, weight) + times(items, child?.fixedField ?? 0),
    fixedType: times(items, child === undefined ? leafWeight : child.fixedType),
  };
}
