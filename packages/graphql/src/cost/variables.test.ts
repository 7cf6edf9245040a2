import {
  buildSchema,
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLObjectType,
  GraphQLScalarType,
  GraphQLSchema,
  GraphQLString,
  getVariableValues,
  Kind,
  type OperationDefinitionNode,
  parse,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { compileCoercion } from './variables.js';

/*
 * The fast path of variables' coercion answers exactly what graphql-js's getVariableValues answers: the same
 * coerced values (for the variables the operation defines), or the same errors. Checked over many values, odd
 * ones included, for every kind of input type.
 */

const schema = buildSchema(`
  enum Color { RED GREEN }
  scalar Json
  input Inner { a: Int, b: [String!] }
  input Filter {
    name: String
    size: Int!
    ratio: Float
    color: Color
    tags: [String]
    inner: Inner
    self: Filter
    withDefault: Int = 7
    id: ID
  }
  type Query { f(filter: Filter): Int }
`);

const definitions = (
  parse(`query (
  $i: Int, $n: Int!, $f: Float, $s: String, $b: Boolean, $id: ID, $c: Color, $j: Json,
  $list: [Int!], $nested: [[String]], $filter: Filter, $d: Int = 3, $filters: [Filter!]
) { f }`).definitions[0] as OperationDefinitionNode
).variableDefinitions!;

const odd: unknown[] = [
  undefined,
  null,
  0,
  -1,
  1.5,
  2 ** 31,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  '',
  'RED',
  'BLUE',
  '12',
  true,
  false,
  [],
  [1, 2],
  [null],
  ['a', null],
  [['x'], null],
  'not a list',
  {},
  { size: 1 },
  { size: 1, name: 'x', ratio: 0.5, color: 'GREEN', tags: ['a', null], id: 'x' },
  { size: 1, withDefault: 2, inner: { a: 1, b: ['x'] }, self: { size: 2, withDefault: 1 } },
  { size: 1, withDefault: 2, unknown: 1 },
  { size: null, withDefault: 2 },
  { size: 1, withDefault: 2, id: 5 },
  { size: 1, withDefault: 2, inner: { b: 'one' } },
  { size: 1, withDefault: 2, name: undefined },
];

function slow(given: Record<string, unknown>) {
  const result = getVariableValues(schema, definitions, given);
  return result.errors === undefined ? { coerced: result.coerced } : { errors: result.errors.map(String) };
}

/** The defined variables of a coerced map: graphql-js keeps only those; the fast path may keep others. */
function defined(coerced: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const names = definitions.map((definition) => definition.variable.name.value);
  return Object.fromEntries(Object.entries(coerced).filter(([name]) => names.includes(name)));
}

describe('variables: the fast path agrees with getVariableValues', () => {
  const { coerce, recursive } = compileCoercion(schema, definitions);
  const names = definitions.map((definition) => definition.variable.name.value);

  it('for every variable given each odd value, the others valid', () => {
    let compared = 0;
    for (const name of names) {
      for (const value of odd) {
        const given: Record<string, unknown> = { n: 1, filter: { size: 1, withDefault: 1 }, [name]: value };
        if (value === undefined) delete given[name];
        const fast = coerce(given);
        const expected = slow(given);
        if ('errors' in fast) expect({ errors: fast.errors.map(String) }).toEqual(expected);
        else expect({ coerced: defined(fast.coerced) }).toEqual(expected);
        compared += 1;
      }
    }
    expect(compared).toBe(names.length * odd.length);
  });

  it('uses the values as given when coercion would leave them as they are', () => {
    const given = { n: 2, d: 4, i: 1, s: 'x', filter: { size: 3, withDefault: 1, tags: ['a'] } };
    const result = coerce(given);
    expect('coerced' in result && result.coerced).toBe(given);
  });

  it('knows an input object that contains itself: values through it may nest as deep as a request likes', () => {
    expect(recursive).toBe(true);
    const flat = parse('query ($i: [[Int]], $inner: Inner) { f }').definitions[0] as OperationDefinitionNode;
    expect(compileCoercion(schema, flat.variableDefinitions!).recursive).toBe(false);
  });

  it('fills in defaults, of variables, as graphql-js does', () => {
    const result = coerce({ n: 2 });
    expect('coerced' in result && result.coerced).toEqual({ n: 2, d: 3 });
  });

  it('leaves code-first enums whose values are not their names, and own scalars, to graphql-js', () => {
    const Level = new GraphQLEnumType({ name: 'Level', values: { LOW: { value: 1 } } });
    const Upper = new GraphQLScalarType({
      name: 'Upper',
      parseValue: (value) => String(value).toUpperCase(),
    });
    const Both = new GraphQLInputObjectType({
      name: 'Both',
      fields: { level: { type: Level }, upper: { type: Upper } },
    });
    const codeFirst = new GraphQLSchema({
      query: new GraphQLObjectType({
        name: 'Query',
        fields: { f: { type: GraphQLString, args: { both: { type: Both } } } },
      }),
    });
    const variables = parse('query ($b: Both) { f(both: $b) }').definitions[0];
    if (variables?.kind !== Kind.OPERATION_DEFINITION) throw new Error('not an operation');
    const result = compileCoercion(codeFirst, variables.variableDefinitions!).coerce({
      b: { level: 'LOW', upper: 'x' },
    });
    expect('coerced' in result && result.coerced).toEqual({ b: { level: 1, upper: 'X' } });
  });
});
