import { createRequire } from 'node:module';
import * as esm from 'graphql';
import {
  type ComplexityEstimatorArgs,
  fieldExtensionsEstimator,
  getComplexity,
  simpleEstimator,
} from 'graphql-query-complexity';
import { describe, expect, it } from 'vitest';
import { costEstimator } from './index.js';
import type { CostEstimate, CostRefusal } from './types.js';

/*
 * The IBM spec's field cost against graphql-query-complexity 2 (fieldExtensionsEstimator, simpleEstimator as
 * its fallback) on one schema, whose fields carry both `extensions.cost` / `extensions.listSize` (ours) and
 * `extensions.complexity` (theirs), written so the two formulas agree: a leaf weighs its @cost, an object field
 * 1 plus its children, a list field 1 plus its slicing argument times its children. Where they still differ,
 * each case says why (packages/graphql/README.md, "Cost: the IBM spec", lists the same).
 *
 * The schema is built from one definition in each graphql-js instance: vitest gives our source graphql's ESM
 * build, while graphql-query-complexity, loaded by Node, gets its CommonJS build (graphql-js refuses a schema
 * from "another module or realm").
 */

type GraphQL = typeof esm;
const cjs = createRequire(import.meta.url)('graphql') as GraphQL;

type Complexity = number | ((args: ComplexityEstimatorArgs) => number);

function define(graphql: GraphQL): esm.GraphQLSchema {
  const { GraphQLEnumType, GraphQLFloat, GraphQLID, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLString } =
    graphql;
  const leaf = (type: esm.GraphQLOutputType, weight = 0) => ({
    type,
    extensions: { complexity: weight, ...(weight === 0 ? {} : { cost: { weight: String(weight) } }) },
  });
  const object = (type: esm.GraphQLOutputType, args = {}) => ({
    type,
    args,
    extensions: { complexity: ({ childComplexity }: ComplexityEstimatorArgs) => 1 + childComplexity },
  });
  const sliced = (
    type: esm.GraphQLOutputType,
    args: esm.GraphQLFieldConfigArgumentMap,
    complexity: Complexity,
  ) => ({
    type: new GraphQLList(type),
    args,
    extensions: {
      complexity,
      listSize: { slicingArguments: Object.keys(args).filter((name) => name !== 'sort') },
    },
  });
  const bySlice = ({ args, childComplexity }: ComplexityEstimatorArgs) =>
    1 + Number(args.first ?? args.last ?? 0) * childComplexity;
  const first = { first: { type: new GraphQLNonNull(GraphQLInt) } };
  const Node: esm.GraphQLInterfaceType = new graphql.GraphQLInterfaceType({
    name: 'Node',
    fields: { id: leaf(GraphQLID) },
  });
  const Film = new graphql.GraphQLObjectType({
    name: 'Film',
    interfaces: [Node],
    fields: { id: leaf(GraphQLID), title: leaf(GraphQLString), rating: leaf(GraphQLFloat, 2) },
  });
  const Person: esm.GraphQLObjectType = new graphql.GraphQLObjectType({
    name: 'Person',
    interfaces: [Node],
    fields: () => ({
      id: leaf(GraphQLID),
      name: leaf(GraphQLString),
      films: sliced(Film, first, bySlice),
      friends: object(new GraphQLList(Person)),
    }),
  });
  const Sort = new GraphQLEnumType({ name: 'Sort', values: { TITLE: {} } });
  const Result = new graphql.GraphQLUnionType({ name: 'Result', types: [Film, Person] });
  const id = { id: { type: new GraphQLNonNull(GraphQLID) } };
  const sort = { sort: { type: Sort, extensions: { cost: { weight: '3.0' } } } };
  const query = new graphql.GraphQLObjectType({
    name: 'Query',
    fields: {
      films: sliced(Film, { ...first, ...sort }, bySlice),
      recent: sliced(Film, { first: { type: GraphQLInt }, last: { type: GraphQLInt } }, bySlice),
      search: sliced(Result, first, bySlice),
      person: object(Person, id),
      node: object(Node, id),
    },
  });
  return new graphql.GraphQLSchema({ query, types: [Film, Person] });
}

const ours = costEstimator(define(esm), { costOf: 'fields' });
const theirsSchema = define(cjs);
const estimators = [fieldExtensionsEstimator(), simpleEstimator({ defaultComplexity: 1 })];

function oursOf(query: string, variables?: Record<string, unknown>): CostEstimate | CostRefusal {
  return ours.estimate({ query, variables });
}

function costOf(query: string, variables?: Record<string, unknown>): number {
  const result = oursOf(query, variables);
  if (!result.ok) throw new Error(result.errors.map((error) => error.message).join('; '));
  return result.cost;
}

function theirs(query: string, variables?: Record<string, unknown>): number {
  return getComplexity({ schema: theirsSchema, query: cjs.parse(query), variables, estimators });
}

describe('graphql-query-complexity and the IBM spec agree where their formulas are the same', () => {
  const cases: [string, string, Record<string, unknown> | undefined, number][] = [
    ['a sliced list of objects', '{ films(first: 5) { title rating } }', undefined, 1 + 5 * 2],
    [
      'an object field, a slicing argument by variable',
      'query ($n: Int!) { person(id: 1) { name films(first: $n) { rating } } }',
      { n: 3 },
      1 + 1 + 3 * 2,
    ],
    [
      'a union: the heaviest member, per item',
      '{ search(first: 4) { ... on Film { rating } ... on Person { films(first: 2) { rating } } } }',
      undefined,
      1 + 4 * (1 + 2 * 2),
    ],
    [
      'an interface through a named fragment',
      '{ node(id: 1) { ...F } } fragment F on Film { rating }',
      undefined,
      1 + 2,
    ],
    [
      '@skip by a variable',
      'query ($s: Boolean!) { films(first: 2) { rating @skip(if: $s) title } }',
      { s: false },
      1 + 2 * 2,
    ],
    [
      '@skip by a variable, skipped',
      'query ($s: Boolean!) { films(first: 2) { rating @skip(if: $s) } }',
      { s: true },
      1,
    ],
  ];
  for (const [name, query, variables, expected] of cases) {
    it(name, () => {
      expect(costOf(query, variables)).toBe(expected);
      expect(theirs(query, variables)).toBe(expected);
    });
  }
});

describe('where they differ, and why', () => {
  it('fields of one response key: graphql-js runs them once; graphql-query-complexity prices each occurrence', () => {
    const twice = '{ films(first: 5) { rating } films(first: 5) { rating } }';
    expect([costOf(twice), theirs(twice)]).toEqual([11, 22]);
    const spread = '{ films(first: 5) { rating ...R } } fragment R on Film { rating }';
    expect([costOf(spread), theirs(spread)]).toEqual([11, 21]);
  });

  it('a list without @listSize: defaultListSize items (10) against one, unless its complexity function multiplies', () => {
    const query = '{ person(id: 1) { friends { films(first: 1) { rating } } } }';
    expect([costOf(query), theirs(query)]).toEqual([1 + 1 + 10 * 3, 1 + 1 + 3]);
  });

  it("argument weights: the spec's @cost on an argument; graphql-query-complexity only what the function computes", () => {
    const query = '{ films(first: 2, sort: TITLE) { title } }';
    expect([costOf(query), theirs(query)]).toEqual([1 + 3, 1]);
  });

  it('requireOneSlicingArgument: the spec refuses a sliced list given no slicing argument; the other prices it', () => {
    const query = '{ recent { rating } }';
    const refusal = oursOf(query);
    expect(refusal.ok === false && refusal.errors[0]?.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(theirs(query)).toBe(1);
  });

  it('introspection: free here by default; the fallback estimator prices __typename', () => {
    const query = '{ films(first: 1) { __typename title } }';
    expect([costOf(query), theirs(query)]).toEqual([1, 2]);
  });

  it("type cost: the spec also counts each object returned (costOf 'both', the default); the other has no such count", () => {
    const both = costEstimator(define(esm));
    const result = both.estimate({ query: '{ films(first: 5) { title } }' });
    // Field cost 1; type cost: the Query and five Films.
    expect(result.ok && result.cost).toBe(1 + 6);
    expect(theirs('{ films(first: 5) { title } }')).toBe(1);
  });
});
