import {
  type ArgumentNode,
  type GraphQLInputType,
  getNamedType,
  getNullableType,
  isInputObjectType,
  isLeafType,
  isListType,
  Kind,
  type ValueNode,
  valueFromAST,
} from 'graphql';
import { type Dyn, sumOf } from './dyn.js';
import type { CostModel, InputWeight } from './model.js';

/*
 * The cost of arguments (spec §5.3.2.2): each argument given a value weighs its weight plus the weights of the
 * input fields its value uses, at any depth and for each item of a list. An argument left out or given null
 * weighs nothing (its schema default is no work the query asked for). A value with no variable in it is priced
 * once, when the document is compiled.
 */

/** The cost of the arguments given on a field or directive, by their weights. */
export function argumentsCost(
  model: CostModel,
  weights: ReadonlyMap<string, InputWeight> | undefined,
  nodes: readonly ArgumentNode[] | undefined,
): Dyn {
  if (weights === undefined || nodes === undefined || nodes.length === 0) return 0;
  const parts: Dyn[] = [];
  for (const node of nodes) {
    const input = weights.get(node.name.value);
    if (input === undefined) continue;
    if (input.weight === 0 && isLeafType(getNamedType(input.type))) continue;
    parts.push(argumentCost(model, input, node.value));
  }
  return sumOf(parts);
}

function argumentCost(model: CostModel, input: InputWeight, node: ValueNode): Dyn {
  const priced = (value: unknown): number =>
    value === null || value === undefined ? 0 : input.weight + inputValueCost(model, input.type, value);
  if (node.kind === Kind.VARIABLE) {
    const name = node.name.value;
    return (context) => priced(context.variables[name]);
  }
  if (hasVariable(node)) return (context) => priced(valueFromAST(node, input.type, context.variables));
  return priced(valueFromAST(node, input.type));
}

/** The weights of the input fields a value uses, for each item of its lists. */
export function inputValueCost(model: CostModel, type: GraphQLInputType, value: unknown): number {
  if (value === null || value === undefined) return 0;
  const nullable = getNullableType(type);
  if (isListType(nullable)) {
    if (!Array.isArray(value)) return inputValueCost(model, nullable.ofType, value);
    let total = 0;
    for (const item of value) total += inputValueCost(model, nullable.ofType, item);
    return total;
  }
  if (!isInputObjectType(nullable) || typeof value !== 'object') return 0;
  let total = 0;
  const given = value as Record<string, unknown>;
  for (const field of model.inputFields(nullable)) {
    const item = given[field.name];
    if (item === null || item === undefined) continue;
    total += field.weight + inputValueCost(model, field.type, item);
  }
  return total;
}

function hasVariable(node: ValueNode): boolean {
  const stack: ValueNode[] = [node];
  while (stack.length > 0) {
    const current = stack.pop()!;
    if (current.kind === Kind.VARIABLE) return true;
    if (current.kind === Kind.LIST) stack.push(...current.values);
    else if (current.kind === Kind.OBJECT) for (const field of current.fields) stack.push(field.value);
  }
  return false;
}
