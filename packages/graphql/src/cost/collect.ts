import {
  type DirectiveNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLObjectType,
  type GraphQLSchema,
  isAbstractType,
  Kind,
  type SelectionNode,
  type SelectionSetNode,
} from 'graphql';

/*
 * The spec's CollectFields, as graphql-js executes it: fields grouped by response key (an alias, else the name),
 * each group run once with its selection sets merged; fragments whose type condition does not apply to the
 * object type left out; a fragment spread once per group; @skip / @include decided by `included`. Iterative:
 * fragments may nest inline fragments and spreads as deep as the document's bounds allow.
 */

/** Whether @skip / @include let a selection run: `conditions` answers a variable's boolean value. */
export type Conditions = (variable: string) => boolean | undefined;

/** Counts the selections visited while compiling; above its limit, compiling stops. */
export interface Budget {
  spent: number;
  readonly limit: number;
}

export class BudgetExceeded extends Error {}

export interface Collection {
  readonly schema: GraphQLSchema;
  readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>;
  readonly conditions: Conditions;
  readonly budget: Budget;
}

/** The fields that run on an object of `type` for these selection sets, by response key, in document order. */
export function collectFields(
  context: Collection,
  type: GraphQLObjectType,
  selectionSets: readonly SelectionSetNode[],
): Map<string, FieldNode[]> {
  const groups = new Map<string, FieldNode[]>();
  let visited: Set<string> | undefined;
  const stack: { selections: readonly SelectionNode[]; next: number }[] = [];
  for (let i = selectionSets.length - 1; i >= 0; i -= 1)
    stack.push({ selections: selectionSets[i]!.selections, next: 0 });
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (top.next === top.selections.length) {
      stack.pop();
      continue;
    }
    const selection = top.selections[top.next++]!;
    spend(context.budget);
    if (!included(selection.directives, context.conditions)) continue;
    if (selection.kind === Kind.FIELD) {
      const key = selection.alias?.value ?? selection.name.value;
      const group = groups.get(key);
      if (group === undefined) groups.set(key, [selection]);
      else group.push(selection);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      if (applies(context.schema, selection.typeCondition?.name.value, type)) {
        stack.push({ selections: selection.selectionSet.selections, next: 0 });
      }
    } else {
      const name = selection.name.value;
      const fragment = context.fragments.get(name);
      if (visited?.has(name) || fragment === undefined) continue;
      visited ??= new Set();
      visited.add(name);
      if (applies(context.schema, fragment.typeCondition.name.value, type)) {
        stack.push({ selections: fragment.selectionSet.selections, next: 0 });
      }
    }
  }
  return groups;
}

function spend(budget: Budget): void {
  budget.spent += 1;
  if (budget.spent > budget.limit) throw new BudgetExceeded();
}

function applies(schema: GraphQLSchema, condition: string | undefined, type: GraphQLObjectType): boolean {
  if (condition === undefined || condition === type.name) return true;
  const conditionType = schema.getType(condition);
  return (
    conditionType !== undefined && isAbstractType(conditionType) && schema.isSubType(conditionType, type)
  );
}

/** @skip(if:) and @include(if:), a literal or a variable; a variable with no boolean value includes. */
export function included(directives: readonly DirectiveNode[] | undefined, conditions: Conditions): boolean {
  if (directives === undefined || directives.length === 0) return true;
  for (const directive of directives) {
    const name = directive.name.value;
    if (name !== 'skip' && name !== 'include') continue;
    const value = directive.arguments?.find((argument) => argument.name.value === 'if')?.value;
    let condition: boolean | undefined;
    if (value?.kind === Kind.BOOLEAN) condition = value.value;
    else if (value?.kind === Kind.VARIABLE) condition = conditions(value.name.value);
    if (condition === undefined) continue;
    if (name === 'skip' && condition) return false;
    if (name === 'include' && !condition) return false;
  }
  return true;
}

/** The variables a document's @skip / @include read: the plans of an operation differ only by these. */
export function conditionVariables(selectionSets: readonly SelectionSetNode[]): string[] {
  const names = new Set<string>();
  const stack = [...selectionSets];
  while (stack.length > 0) {
    for (const selection of stack.pop()!.selections) {
      for (const directive of selection.directives ?? []) {
        if (directive.name.value !== 'skip' && directive.name.value !== 'include') continue;
        for (const argument of directive.arguments ?? []) {
          if (argument.value.kind === Kind.VARIABLE) names.add(argument.value.name.value);
        }
      }
      if (selection.kind !== Kind.FRAGMENT_SPREAD && selection.selectionSet !== undefined) {
        stack.push(selection.selectionSet);
      }
    }
  }
  return [...names];
}
