import {
  type GraphQLError,
  type GraphQLInputObjectType,
  type GraphQLInputType,
  type GraphQLScalarType,
  type GraphQLSchema,
  getNamedType,
  getVariableValues,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  specifiedScalarTypes,
  typeFromAST,
  type VariableDefinitionNode,
  valueFromAST,
} from 'graphql';

/*
 * A request's variables, coerced as graphql-js coerces them (getVariableValues), with a fast path: most
 * requests send values that coercion leaves as they are (an Int that is an integer, a String that is a string,
 * an input object with known fields). Per operation, a check compiled once proves that of a request's values,
 * and the values are used as given (defaults filled in). Anything it cannot prove (a custom scalar, an ID sent
 * as a number, a single value for a list, a missing input field with a default, an error) goes to
 * getVariableValues, whose answer, errors included, is the one that counts.
 */

type Variables = Readonly<Record<string, unknown>>;

/** Whether coercion would leave a value exactly as it is. */
type Canonical = (value: unknown) => boolean;

const INT_MIN = -(2 ** 31);
const INT_MAX = 2 ** 31 - 1;

const SCALARS: Readonly<Record<string, Canonical>> = {
  Int: (value) =>
    typeof value === 'number' && Number.isInteger(value) && value >= INT_MIN && value <= INT_MAX,
  Float: (value) => typeof value === 'number' && Number.isFinite(value),
  String: (value) => typeof value === 'string',
  Boolean: (value) => typeof value === 'boolean',
  ID: (value) => typeof value === 'string',
};

const NEVER: Canonical = () => false;

interface Defined {
  readonly name: string;
  readonly canonical: Canonical;
  readonly required: boolean;
  /** The definition's default, coerced; undefined when none. */
  readonly fallback: unknown;
}

/** The coercion of an operation's variables: errors as graphql-js reports them. */
export type Coerce = (
  given: Variables,
) => { readonly coerced: Variables } | { readonly errors: readonly GraphQLError[] };

export interface Coercion {
  readonly coerce: Coerce;
  /**
   * Whether a value may nest deeper than its type, through an input object that contains itself: only then can
   * coercing it recurse as deep as the request likes, and its depth is checked first (bounds.ts).
   */
  readonly recursive: boolean;
}

/** Compiles the coercion of an operation's variable definitions (once per operation). */
export function compileCoercion(
  schema: GraphQLSchema,
  definitions: readonly VariableDefinitionNode[],
): Coercion {
  const types = definitions.map(
    (definition) => typeFromAST(schema, definition.type) as GraphQLInputType | undefined,
  );
  const recursive = types.some((type) => type === undefined || containsItself(type));
  return { coerce: coercionOf(schema, definitions, types), recursive };
}

function coercionOf(
  schema: GraphQLSchema,
  definitions: readonly VariableDefinitionNode[],
  types: readonly (GraphQLInputType | undefined)[],
): Coerce {
  const slow: Coerce = (given) => {
    const result = getVariableValues(schema, definitions, given, { maxErrors: 50 });
    return result.errors === undefined ? { coerced: result.coerced } : { errors: result.errors };
  };
  const defined: Defined[] = [];
  for (const [index, definition] of definitions.entries()) {
    const type = types[index];
    if (type === undefined) return slow;
    const fallback =
      definition.defaultValue === undefined ? undefined : valueFromAST(definition.defaultValue, type);
    defined.push({
      name: definition.variable.name.value,
      canonical: canonicalOf(type),
      required: isNonNullType(type),
      fallback,
    });
  }
  return (given) => {
    let coerced: Record<string, unknown> | undefined;
    for (const { name, canonical, required, fallback } of defined) {
      if (!Object.hasOwn(given, name)) {
        if (fallback !== undefined) {
          coerced ??= { ...given };
          coerced[name] = fallback;
        } else if (required) {
          return slow(given);
        }
        continue;
      }
      const value = given[name];
      if (value === undefined || (value === null ? required : !canonical(value))) return slow(given);
    }
    return { coerced: coerced ?? given };
  };
}

function canonicalOf(type: GraphQLInputType): Canonical {
  if (isNonNullType(type)) {
    const inner = canonicalOf(type.ofType);
    return (value) => value !== null && value !== undefined && inner(value);
  }
  const nullable =
    (check: Canonical): Canonical =>
    (value) =>
      value === null || check(value);
  if (isListType(type)) {
    const item = canonicalOf(type.ofType);
    return nullable((value) => Array.isArray(value) && value.every(item));
  }
  if (isScalarType(type)) return nullable(isSpecified(type) ? (SCALARS[type.name] ?? NEVER) : NEVER);
  if (isEnumType(type)) {
    // An enum's value is its name in SDL schemas; code-first ones may map names to other values.
    return nullable((value) => typeof value === 'string' && type.getValue(value)?.value === value);
  }
  if (isInputObjectType(type) && !type.isOneOf) return nullable(canonicalObject(type));
  return NEVER;
}

function canonicalObject(type: GraphQLInputObjectType): Canonical {
  let fields:
    | { readonly name: string; readonly canonical: Canonical; readonly completes: boolean }[]
    | undefined;
  return (value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
    // Built on first use: input types may refer to themselves.
    fields ??= Object.entries(type.getFields()).map(([name, field]) => ({
      name,
      canonical: canonicalOf(field.type),
      // A field left out is left out by coercion too, unless it is required or has a default.
      completes: !isNonNullType(field.type) && field.defaultValue === undefined,
    }));
    const given = value as Record<string, unknown>;
    let known = 0;
    for (const field of fields) {
      const item = given[field.name];
      if (item === undefined) {
        if (!field.completes) return false;
      } else {
        if (!field.canonical(item)) return false;
        known += 1;
      }
    }
    return known === Object.keys(given).length;
  };
}

const selfContaining = new WeakMap<GraphQLInputObjectType, boolean>();

/** Whether an input object reachable from the type reaches itself; known once per input type. */
function containsItself(type: GraphQLInputType): boolean {
  const start = getNamedType(type);
  if (!isInputObjectType(start)) return false;
  let known = selfContaining.get(start);
  if (known === undefined) {
    known = reachesACycle(start);
    selfContaining.set(start, known);
  }
  return known;
}

/** A depth-first walk of the input types (iterative: schemas can be large), looking for a way back. */
function reachesACycle(start: GraphQLInputObjectType): boolean {
  const state = new Map<GraphQLInputObjectType, 'open' | 'done'>([[start, 'open']]);
  const fieldTypes = (type: GraphQLInputObjectType) =>
    Object.values(type.getFields()).map((field) => field.type);
  const stack: { type: GraphQLInputObjectType; fields: GraphQLInputType[] }[] = [
    { type: start, fields: fieldTypes(start) },
  ];
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    const next = top.fields.pop();
    if (next === undefined) {
      state.set(top.type, 'done');
      stack.pop();
      continue;
    }
    const named = getNamedType(next);
    if (!isInputObjectType(named) || state.get(named) === 'done') continue;
    if (state.get(named) === 'open') return true;
    state.set(named, 'open');
    stack.push({ type: named, fields: fieldTypes(named) });
  }
  return false;
}

/** graphql-js's own scalar (by identity: a schema's own scalar may reuse a name, with its own parseValue). */
function isSpecified(type: GraphQLScalarType): boolean {
  return specifiedScalarTypes.includes(type);
}
