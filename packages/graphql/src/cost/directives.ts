import { type ConstDirectiveNode, valueFromASTUntyped } from 'graphql';

/*
 * Where a schema element's @cost and @listSize are read: its SDL (astNode, then each extensionASTNode, for
 * SDL-first schemas) or its `extensions.cost` / `extensions.listSize` (code-first schemas). Values are returned
 * as found; model.ts checks them against the spec.
 */

/** `extensions.cost` of a code-first type, field, argument or input field: the directive's argument. */
export interface CostExtension {
  /** A serialized Float ("2.0"), as the directive takes it, or a number. */
  readonly weight: string | number;
}

/** `extensions.listSize` of a code-first field: the directive's arguments. */
export interface ListSizeExtension {
  readonly assumedSize?: number;
  readonly slicingArguments?: readonly string[];
  readonly sizedFields?: readonly string[];
  /** Default true, as the directive's. */
  readonly requireOneSlicingArgument?: boolean;
}

/** The parts of a graphql-js schema element the directives are read from. */
export interface DirectedElement {
  readonly astNode?: { readonly directives?: readonly ConstDirectiveNode[] } | null | undefined;
  readonly extensionASTNodes?: readonly { readonly directives?: readonly ConstDirectiveNode[] }[];
  readonly extensions?: Readonly<Record<string, unknown>> | null | undefined;
}

/** The arguments of the directive `name` on an element, as plain values; undefined when it has none. */
export function directiveArguments(
  element: DirectedElement,
  name: 'cost' | 'listSize',
): Readonly<Record<string, unknown>> | undefined {
  const found = findDirective(element, name);
  if (found !== undefined) {
    const values: Record<string, unknown> = {};
    for (const argument of found.arguments ?? [])
      values[argument.name.value] = valueFromASTUntyped(argument.value);
    return values;
  }
  const extension = element.extensions?.[name];
  return typeof extension === 'object' && extension !== null
    ? (extension as Record<string, unknown>)
    : undefined;
}

function findDirective(element: DirectedElement, name: string): ConstDirectiveNode | undefined {
  const own = element.astNode?.directives?.find((directive) => directive.name.value === name);
  if (own !== undefined) return own;
  for (const extension of element.extensionASTNodes ?? []) {
    const found = extension.directives?.find((directive) => directive.name.value === name);
    if (found !== undefined) return found;
  }
  return undefined;
}
