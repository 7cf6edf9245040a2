import {
  buildSchema,
  GraphQLInt,
  GraphQLList,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  Kind,
  parse,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { costDirectivesSdl, costEstimator } from './index.js';
import type { CostEstimate, CostRefusal, EstimatorOptions } from './types.js';

/*
 * The estimator around the spec's formula: refusals with the codes a GraphQL user expects, graphql-js's
 * execution semantics (merged fields, fragments, @skip / @include), directives read from SDL extensions and
 * code-first `extensions`, introspection, caching and the options.
 */

const SDL = `${costDirectivesSdl}
  type User {
    name: String
    age: Int @cost(weight: "2.0")
    friends(first: Int): [User] @listSize(slicingArguments: ["first"])
  }
  type Query {
    users(max: Int): [User] @listSize(slicingArguments: ["max"])
    user(id: ID!): User
  }
  type Mutation { rename(name: String!): User @cost(weight: "10.0") }
`;
const schema = buildSchema(SDL);

function estimator(options?: EstimatorOptions) {
  return costEstimator(schema, { costOf: 'fields', ...options });
}

function priced(result: CostEstimate | CostRefusal): CostEstimate {
  if (!result.ok) throw new Error(result.errors.map((error) => error.message).join('; '));
  return result;
}

function codeOf(result: CostEstimate | CostRefusal): unknown {
  if (result.ok) throw new Error(`expected a refusal, got cost ${result.cost}`);
  return result.errors[0]?.extensions.code;
}

function messageOf(result: CostEstimate | CostRefusal): string {
  if (result.ok) throw new Error(`expected a refusal, got cost ${result.cost}`);
  return result.errors.map((error) => error.message).join('; ');
}

describe('refusals, with the codes a GraphQL user expects', () => {
  const costs = estimator();

  it('GRAPHQL_PARSE_FAILED for text that is not GraphQL', () => {
    const result = costs.estimate({ query: '{ users(max: 5) { age }' });
    expect(codeOf(result)).toBe('GRAPHQL_PARSE_FAILED');
    expect(messageOf(result)).toMatch(/^Syntax Error: Expected Name, found <EOF>/);
  });

  it("GRAPHQL_VALIDATION_FAILED for what graphql-js's specified rules refuse, each error located", () => {
    const result = costs.estimate({ query: '{ users(max: 5) { height } }' });
    expect(codeOf(result)).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(messageOf(result)).toBe('Cannot query field "height" on type "User".');
    expect(result.ok === false && result.errors[0]?.locations).toEqual([{ line: 1, column: 19 }]);
  });

  it('OPERATION_RESOLUTION_FAILURE for an unknown operation name, or several operations and none named', () => {
    const query = 'query A { user(id: 1) { name } } query B { user(id: 2) { age } }';
    expect(codeOf(costs.estimate({ query, operationName: 'C' }))).toBe('OPERATION_RESOLUTION_FAILURE');
    expect(messageOf(costs.estimate({ query, operationName: 'C' }))).toBe('Unknown operation named "C".');
    expect(messageOf(costs.estimate({ query }))).toBe(
      'Must provide operation name if query contains multiple operations.',
    );
    expect(priced(costs.estimate({ query, operationName: 'B' })).cost).toBe(1 + 2);
    expect(priced(costs.estimate({ query, operationName: 'A' })).operation).toEqual({
      name: 'A',
      type: 'query',
      rootFields: ['user'],
    });
  });

  it('BAD_USER_INPUT for variables of the wrong type or missing, as graphql-js coerces them', () => {
    const query = 'query ($id: ID!, $n: Int) { user(id: $id) { friends(first: $n) { name } } }';
    expect(codeOf(costs.estimate({ query, variables: { id: 1, n: 'three' } }))).toBe('BAD_USER_INPUT');
    expect(messageOf(costs.estimate({ query, variables: { id: 1, n: 'three' } }))).toMatch(
      /^Variable "\$n" got invalid value "three"; Int cannot represent non-integer value: "three"/,
    );
    expect(messageOf(costs.estimate({ query, variables: { n: 2 } }))).toBe(
      'Variable "$id" of required type "ID!" was not provided.',
    );
    expect(priced(costs.estimate({ query, variables: { id: 1, n: 2 } })).cost).toBe(1 + 1);
  });

  it('BAD_REQUEST for no query, or variables that are not an object', () => {
    expect(codeOf(costs.estimate({}))).toBe('BAD_REQUEST');
    expect(codeOf(costs.estimate({ query: '  ' }))).toBe('BAD_REQUEST');
    const query = 'query ($id: ID!) { user(id: $id) { name } }';
    expect(codeOf(costs.estimate({ query, variables: [1] as never }))).toBe('BAD_REQUEST');
  });

  it('GRAPHQL_VALIDATION_FAILED for an operation type the schema does not have', () => {
    const queryOnly = costEstimator(buildSchema('type Query { a: Int }'));
    expect(messageOf(queryOnly.estimate({ query: 'subscription { a }' }))).toBe(
      'Schema is not configured to execute subscription operation.',
    );
  });
});

describe("graphql-js's execution semantics", () => {
  const costs = estimator();

  it('fields of one response key run once, their selections merged, across fragments', () => {
    const merged = '{ users(max: 5) { age } users(max: 5) { name age } }';
    expect(priced(costs.estimate({ query: merged })).cost).toBe(1 + 5 * 2);
    const spread = '{ users(max: 5) { ...A ...A ... on User { age } } } fragment A on User { age name }';
    expect(priced(costs.estimate({ query: spread })).cost).toBe(1 + 5 * 2);
  });

  it('aliases run apart, each priced', () => {
    const query = '{ a: users(max: 5) { age } b: users(max: 2) { age } }';
    const estimate = priced(costs.estimate({ query }));
    expect(estimate.cost).toBe(1 + 10 + 1 + 4);
    expect(estimate.operation.rootFields).toEqual(['a', 'b']);
  });

  it('@skip and @include, literal or by a variable, leave out what does not run', () => {
    expect(priced(costs.estimate({ query: '{ users(max: 5) { age @skip(if: true) name } }' })).cost).toBe(1);
    const query =
      'query ($with: Boolean!) { users(max: 5) { age @include(if: $with) } user(id: 1) { name } }';
    expect(priced(costs.estimate({ query, variables: { with: true } })).cost).toBe(1 + 10 + 1);
    expect(priced(costs.estimate({ query, variables: { with: false } })).cost).toBe(1 + 1);
    expect(priced(costs.estimate({ query, variables: { with: true } })).cost).toBe(1 + 10 + 1);
  });

  it('nested lists multiply: friends of friends', () => {
    const query = 'query ($n: Int) { users(max: 3) { friends(first: $n) { friends(first: 2) { age } } } }';
    // users 1; 3 × friends 1; 3 × n × friends 1; 3 × n × 2 × age 2.
    expect(priced(costs.estimate({ query, variables: { n: 4 } })).cost).toBe(1 + 3 + 12 + 48);
    expect(priced(costs.estimate({ query, variables: { n: 0 } })).cost).toBe(1 + 3);
  });

  it('mutations are priced as queries are, and their root counts in the type cost', () => {
    const both = costEstimator(schema);
    const estimate = priced(both.estimate({ query: 'mutation { rename(name: "x") { name } }' }));
    expect(estimate.fieldCost).toBe(10);
    expect(estimate.typeCost).toBe(2);
    expect(estimate.operation).toEqual({ name: undefined, type: 'mutation', rootFields: ['rename'] });
  });
});

describe('where @cost and @listSize are read', () => {
  it('from SDL extensions of a type and of its fields', () => {
    const extended = buildSchema(`${costDirectivesSdl}
      type Photo { url: String }
      extend type Photo @cost(weight: "4.0")
      type Query { photos: [Photo] }
      extend type Query { more: [Photo] @listSize(assumedSize: 2) @cost(weight: "3.0") }
    `);
    const estimate = priced(costEstimator(extended).estimate({ query: '{ photos { url } more { url } }' }));
    expect(estimate.fieldCost).toBe(1 + 3);
    // Query; the default 10 photos and the 2 more, at 4.0 each.
    expect(estimate.typeCost).toBe(1 + 10 * 4 + 2 * 4);
  });

  it('from extensions.cost and extensions.listSize of a code-first schema, as from the directives', () => {
    const User = new GraphQLObjectType({
      name: 'User',
      fields: {
        name: { type: GraphQLString },
        age: { type: GraphQLInt, extensions: { cost: { weight: '2.0' } } },
      },
    });
    const codeFirst = new GraphQLSchema({
      query: new GraphQLObjectType({
        name: 'Query',
        fields: {
          users: {
            type: new GraphQLList(User),
            args: { max: { type: GraphQLInt } },
            extensions: { listSize: { slicingArguments: ['max'] } },
          },
        },
      }),
    });
    const estimate = priced(
      costEstimator(codeFirst).estimate({ query: 'query Example { users(max: 5) { age } }' }),
    );
    expect(estimate.fieldCost).toBe(11);
    expect(codeOf(costEstimator(codeFirst).estimate({ query: '{ users { age } }' }))).toBe(
      'GRAPHQL_VALIDATION_FAILED',
    );
  });

  it('defaultListSize sizes a list with no @listSize', () => {
    const query = '{ user(id: 1) { friends { age } } }';
    expect(codeOf(estimator().estimate({ query }))).toBe('GRAPHQL_VALIDATION_FAILED');
    const lists = costEstimator(buildSchema('type User { age: Int } type Query { users: [User] }'), {
      defaultListSize: 25,
      costOf: 'types',
    });
    expect(priced(lists.estimate({ query: '{ users { age } }' })).cost).toBe(1 + 25);
  });
});

describe('introspection', () => {
  const query = '{ __schema { types { name fields { name } } } user(id: 1) { __typename name } }';

  it("'free' (the default) leaves __schema, __type and __typename out", () => {
    expect(priced(estimator().estimate({ query })).cost).toBe(1);
  });

  it("'priced' prices them as fields of the introspection types, lists at defaultListSize", () => {
    // __schema 1, types 1, 10 × fields 1; user 1.
    expect(priced(estimator({ introspection: 'priced' }).estimate({ query })).cost).toBe(1 + 1 + 10 + 1);
  });

  it("'forbidden' refuses __schema and __type (NoSchemaIntrospectionCustomRule), not __typename", () => {
    const forbidden = estimator({ introspection: 'forbidden' });
    expect(codeOf(forbidden.estimate({ query }))).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(messageOf(forbidden.estimate({ query }))).toMatch(/GraphQL introspection has been disabled/);
    expect(priced(forbidden.estimate({ query: '{ user(id: 1) { __typename } }' })).cost).toBe(1);
  });
});

describe('caching', () => {
  it('parses and validates a query text once: the same document, and the same estimate when no variable changes it', () => {
    const costs = estimator();
    const first = priced(costs.estimate({ query: '{ users(max: 5) { age } }' }));
    const again = priced(costs.estimate({ query: '{ users(max: 5) { age } }' }));
    expect(again).toBe(first);
    const query = 'query ($n: Int) { users(max: $n) { age } }';
    const five = priced(costs.estimate({ query, variables: { n: 5 } }));
    const six = priced(costs.estimate({ query, variables: { n: 6 } }));
    expect([five.cost, six.cost]).toEqual([11, 13]);
    expect(six.document).toBe(five.document);
  });

  it('keeps the cacheSize most recently used texts', () => {
    const costs = estimator({ cacheSize: 2 });
    const a = priced(costs.estimate({ query: '{ a: user(id: 1) { name } }' }));
    costs.estimate({ query: '{ b: user(id: 1) { name } }' });
    expect(priced(costs.estimate({ query: '{ a: user(id: 1) { name } }' })).document).toBe(a.document);
    costs.estimate({ query: '{ c: user(id: 1) { name } }' });
    costs.estimate({ query: '{ b: user(id: 1) { name } }' });
    expect(priced(costs.estimate({ query: '{ a: user(id: 1) { name } }' })).document).not.toBe(a.document);
  });

  it('keeps a DocumentNode by identity, and refusals too', () => {
    const costs = estimator();
    const document = parse('{ users(max: 2) { age } }');
    expect(priced(costs.estimate({ query: document })).document).toBe(document);
    expect(costs.estimate({ query: document })).toBe(costs.estimate({ query: document }));
    expect(costs.estimate({ query: '{ nope }' })).toBe(costs.estimate({ query: '{ nope }' }));
    expect(codeOf(costs.estimate({ query: { kind: Kind.NAME } as never }))).toBe('BAD_REQUEST');
  });
});

describe('options', () => {
  it('are checked once, with a did-you-mean for an unknown name', () => {
    expect(() => costEstimator(schema, { maxDept: 3 } as EstimatorOptions)).toThrow(
      'costEstimator: unknown option "maxDept" (did you mean "maxDepth"?)',
    );
    expect(() => costEstimator(schema, { maxDepth: 500 })).toThrow(
      'costEstimator: maxDepth must be an integer from 1 to 200, got 500',
    );
    expect(() => costEstimator(schema, { defaultListSize: -1 })).toThrow(
      'costEstimator: defaultListSize must be an integer >= 0, got -1',
    );
    expect(() => costEstimator(schema, { costOf: 'all' as never })).toThrow(
      'costEstimator: costOf must be one of both, fields, types, got all',
    );
  });

  it('an invalid schema throws when the estimator is built, not on a request', () => {
    expect(() => costEstimator(new GraphQLSchema({}))).toThrow('Query root type must be provided.');
  });
});
