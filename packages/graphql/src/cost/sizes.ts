import { type FieldNode, type GraphQLNamedType, Kind } from 'graphql';
import type { Dyn } from './dyn.js';
import type { FieldModel, ListSize } from './model.js';
import { refusal } from './refusals.js';
import type { CostRefusal } from './types.js';

/*
 * The size of a list (spec §8): the value of a slicing argument (a literal, a variable, or the argument's schema
 * default when the query gives none), the largest when several are given; with requireOneSlicingArgument (the
 * default) exactly one must be given, else the query is refused as the spec's validation says; without slicing
 * arguments, assumedSize; without @listSize, the estimator's defaultListSize.
 */

interface Slice {
  readonly name: string;
  /** A literal in the query: a number, or null. */
  readonly literal?: number | null;
  /** A variable in the query. */
  readonly variable?: string;
  /** The argument's default in the schema. */
  readonly fallback: number | undefined;
}

/** A field's list size for one field node: a number, a function of the variables, or the refusal of a literal misuse. */
export function listSizeOf(
  model: FieldModel,
  parent: GraphQLNamedType,
  node: FieldNode,
  defaultListSize: number,
): Dyn | CostRefusal {
  const listSize = model.listSize;
  if (listSize === undefined) return defaultListSize;
  if (listSize.slicingArguments.length === 0) return listSize.assumedSize ?? defaultListSize;
  const slices = listSize.slicingArguments.map((name) => sliceOf(model, name, node));
  const decide = (variables: Readonly<Record<string, unknown>>) =>
    sizeFrom(listSize, slices, variables, defaultListSize, parent, node);
  if (slices.every((slice) => slice.variable === undefined)) return decide({});
  return (context) => {
    const size = decide(context.variables);
    if (typeof size === 'number') return size;
    context.refusal ??= size;
    return 0;
  };
}

function sliceOf(model: FieldModel, name: string, node: FieldNode): Slice {
  const schemaDefault = model.args.get(name)?.defaultValue;
  const fallback = typeof schemaDefault === 'number' ? schemaDefault : undefined;
  const value = node.arguments?.find((argument) => argument.name.value === name)?.value;
  if (value === undefined) return { name, fallback };
  if (value.kind === Kind.VARIABLE) return { name, variable: value.name.value, fallback };
  if (value.kind === Kind.INT) return { name, literal: Number(value.value), fallback };
  return { name, literal: null, fallback };
}

function sizeFrom(
  listSize: ListSize,
  slices: readonly Slice[],
  variables: Readonly<Record<string, unknown>>,
  defaultListSize: number,
  parent: GraphQLNamedType,
  node: FieldNode,
): number | CostRefusal {
  const given: number[] = [];
  const defaults: number[] = [];
  for (const slice of slices) {
    const value = slice.variable === undefined ? slice.literal : variables[slice.variable];
    if (typeof value === 'number') given.push(value);
    else if (value === undefined && slice.fallback !== undefined) defaults.push(slice.fallback);
  }
  let sizes = [...given, ...defaults];
  if (listSize.requireOneSlicingArgument) {
    sizes = given.length > 0 ? given : defaults;
    if (sizes.length !== 1) {
      const names = slices.map((slice) => `"${slice.name}"`).join(', ');
      const message =
        `Field "${parent.name}.${node.name.value}" needs exactly one of its slicing arguments ${names}; ${sizes.length} given ` +
        "(the cost spec's @listSize with requireOneSlicingArgument).";
      return refusal('GRAPHQL_VALIDATION_FAILED', message, node);
    }
  }
  if (sizes.length === 0) return listSize.assumedSize ?? defaultListSize;
  return Math.max(0, ...sizes);
}
