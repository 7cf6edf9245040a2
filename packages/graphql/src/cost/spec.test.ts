import { buildSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { costDirectivesSdl, costEstimator } from './index.js';
import type { CostEstimate, CostEstimator, CostRefusal, EstimatorOptions } from './types.js';

/*
 * Every worked example of the IBM cost spec (https://ibm.github.io/graphql-specs/cost-spec.html) with the
 * spec's own numbers. The spec gives its figures as field costs (§5.3.2.2) and type counts (§5.3.1.1); `cost`
 * counts both by default, so these tests read `fieldCost` and `typeCost`. Examples 5-9 and 14-15 show count
 * maps and query paths without a query to price; the counts of 4 are checked through the type cost.
 */

function estimator(sdl: string, options?: EstimatorOptions): CostEstimator {
  return costEstimator(buildSchema(`${costDirectivesSdl}\n${sdl}`), options);
}

function priced(result: CostEstimate | CostRefusal): CostEstimate {
  if (!result.ok) throw new Error(result.errors.map((error) => error.message).join('; '));
  return result;
}

function refused(result: CostEstimate | CostRefusal): CostRefusal {
  if (result.ok) throw new Error(`expected a refusal, got cost ${result.cost}`);
  return result;
}

// Example 1.
const USERS = `
  type User {
    name: String
    age: Int @cost(weight: "2.0")
  }
  type Query {
    users(max: Int): [User] @listSize(slicingArguments: ["max"])
  }
`;

describe('§3 Example: static 11.0, dynamic 7.0 (examples 1-4)', () => {
  const costs = estimator(USERS);
  const query = 'query Example { users (max: 5) { age } }';

  it('prices example 2 at a field cost of 11: Query.users once (1.0), User.age five times (2.0 each)', () => {
    const estimate = priced(costs.estimate({ query }));
    expect(estimate.fieldCost).toBe(11);
    // Type counts: one Query, five User; objects weigh 1.0, the Int ages 0.0.
    expect(estimate.typeCost).toBe(6);
    expect(estimate.cost).toBe(17);
    expect(estimate.operation).toEqual({ name: 'Example', type: 'query', rootFields: ['users'] });
  });

  it('gives the figure of example 2 as `cost` when counting fields only', () => {
    expect(priced(estimator(USERS, { costOf: 'fields' }).estimate({ query })).cost).toBe(11);
  });

  it('reverse-engineers 7.0 from the result of example 3, and the type counts of example 4', () => {
    const data = { users: [{ age: 33 }, { age: 45 }, { age: 27 }] };
    const actual = (costOf: 'both' | 'fields' | 'types') => {
      const counting = estimator(USERS, { costOf });
      return counting.actual(priced(counting.estimate({ query })), null, data);
    };
    // Query.users once (1.0), User.age three times (2.0 each).
    expect(actual('fields')).toBe(7);
    // Example 4: { "Query": 1, "User": 3 }, each weighing 1.0.
    expect(actual('types')).toBe(4);
    expect(actual('both')).toBe(11);
  });
});

// Examples 10, 11, 12 and 13, on one schema.
const PRODUCTS = `
  enum Approximate { YES }
  input Filter {
    approx: Approximate @cost(weight: "-12.0")
    category: String
  }
  type Product { name: String }
  directive @approx(tolerance: Float! @cost(weight: "-1.0")) on FIELD
  type Query {
    topProducts(filter: Filter @cost(weight: "15.0")): [String] @cost(weight: "5.0") @listSize(assumedSize: 10)
    mostPopularProduct(approx: Approximate @cost(weight: "-3.0")): Product @cost(weight: "5.0")
    cheap(approx: Approximate @cost(weight: "-3.0")): Product @cost(weight: "2.0")
  }
`;

describe('§5.3.2.2 Field Cost: argument, negative, input field and directive weights (examples 10-13)', () => {
  const costs = estimator(PRODUCTS, { costOf: 'fields' });
  const cost = (query: string, variables?: Record<string, unknown>) =>
    priced(costs.estimate({ query, variables })).cost;

  it('example 10: topProducts costs 5.0, 20.0 with a filter (5.0 for the field, 15.0 for the argument)', () => {
    expect(cost('{ topProducts }')).toBe(5);
    expect(cost('{ topProducts(filter: { category: "books" }) }')).toBe(20);
    expect(cost('query ($f: Filter) { topProducts(filter: $f) }', { f: { category: 'books' } })).toBe(20);
  });

  it('example 10: a filter left out, or null, is no work asked for', () => {
    expect(cost('query ($f: Filter) { topProducts(filter: $f) }', {})).toBe(5);
    expect(cost('{ topProducts(filter: null) }')).toBe(5);
  });

  it('example 11: mostPopularProduct costs 5.0, and 5.0 - 3.0 = 2.0 when only an approximate answer is needed', () => {
    expect(cost('{ mostPopularProduct { name } }')).toBe(5);
    expect(cost('{ mostPopularProduct(approx: YES) { name } }')).toBe(2);
  });

  it('§7.1: a field whose weights sum below zero costs zero, never less', () => {
    expect(cost('{ cheap(approx: YES) { name } }')).toBe(0);
    expect(cost('{ cheap(approx: YES) { name } mostPopularProduct { name } }')).toBe(5);
  });

  it('example 12: an approximate filter contributes 15.0 - 12.0 = 3.0, for a field cost of 8.0', () => {
    expect(cost('{ topProducts(filter: { approx: YES }) }')).toBe(8);
    expect(cost('query ($a: Approximate) { topProducts(filter: { approx: $a }) }', { a: 'YES' })).toBe(8);
    expect(cost('query ($a: Approximate) { topProducts(filter: { approx: $a }) }', {})).toBe(20);
  });

  it('example 13: each use of @approx(tolerance:) adds -1.0 to its field', () => {
    expect(cost('{ mostPopularProduct @approx(tolerance: 0.1) { name } }')).toBe(4);
    expect(
      cost('{ a: mostPopularProduct @approx(tolerance: 0.1) { name } b: mostPopularProduct { name } }'),
    ).toBe(9);
  });
});

describe('§7.1 default weights, §7.2 abstract types', () => {
  const costs = estimator(`
    scalar Money @cost(weight: "0.5")
    enum Color @cost(weight: "3.0") { RED }
    type Photo @cost(weight: "4.0") { url: String price: Money }
    type Text { body: String color: Color }
    union Media = Photo | Text
    interface Named { name: String }
    type Cheap implements Named { name: String }
    type Dear implements Named { name: String @cost(weight: "7.0") }
    type Query {
      media: [Media] @listSize(assumedSize: 3)
      named: Named
      prices: [Money] @listSize(assumedSize: 4)
      color: Color
    }
  `);

  it('scalars and enums weigh 0.0 unless @cost says; objects 1.0; fields of scalars and enums 0.0, of objects 1.0', () => {
    const estimate = priced(costs.estimate({ query: '{ prices color }' }));
    expect(estimate.fieldCost).toBe(0);
    // Query 1.0, four Money at 0.5, one Color at 3.0.
    expect(estimate.typeCost).toBe(1 + 2 + 3);
  });

  it('a union weighs as its heaviest member, with what is selected on it', () => {
    const estimate = priced(
      costs.estimate({ query: '{ media { ... on Photo { url price } ... on Text { body color } } }' }),
    );
    expect(estimate.fieldCost).toBe(1);
    // Per Media: Photo 4.0 + Money 0.5 = 4.5 against Text 1.0 + Color 3.0 = 4.0; three of them, and the Query.
    expect(estimate.typeCost).toBe(1 + 3 * 4.5);
    expect(estimate.cost).toBe(Math.ceil(1 + 1 + 13.5));
  });

  it("§9.1.1: an interface's field costs as much as its heaviest implementation", () => {
    expect(priced(costs.estimate({ query: '{ named { name } }' })).fieldCost).toBe(1 + 7);
    expect(priced(costs.estimate({ query: '{ named { ... on Cheap { name } } }' })).fieldCost).toBe(1);
  });
});

describe('§8 The List Size Directive (examples 16-18)', () => {
  it('example 16: assumedSize states the list is 10 long', () => {
    const costs = estimator(`
      scalar Product @cost(weight: "1.0")
      type Query { topProducts: [Product] @listSize(assumedSize: 10) }
    `);
    expect(priced(costs.estimate({ query: '{ topProducts }' })).typeCost).toBe(1 + 10);
  });

  it('example 17: the value of the slicing argument max sizes the list, a literal or a variable', () => {
    const costs = estimator(`
      scalar Name @cost(weight: "1.0")
      type Query { users(max: Int!): [Name] @listSize(slicingArguments: ["max"]) }
    `);
    expect(priced(costs.estimate({ query: '{ users(max: 7) }' })).typeCost).toBe(1 + 7);
    const query = 'query ($n: Int!) { users(max: $n) }';
    expect(priced(costs.estimate({ query, variables: { n: 30 } })).typeCost).toBe(1 + 30);
    expect(priced(costs.estimate({ query, variables: { n: -3 } })).typeCost).toBe(1);
  });

  it("§8.2: an argument's schema default counts as given; a variable's default too", () => {
    const costs = estimator(`
      type User { age: Int @cost(weight: "2.0") }
      type Query { users(max: Int = 20): [User] @listSize(slicingArguments: ["max"]) }
    `);
    expect(priced(costs.estimate({ query: '{ users { age } }' })).fieldCost).toBe(1 + 40);
    const query = 'query ($n: Int = 3) { users(max: $n) { age } }';
    expect(priced(costs.estimate({ query })).fieldCost).toBe(1 + 6);
    expect(priced(costs.estimate({ query: 'query ($n: Int) { users(max: $n) { age } }' })).fieldCost).toBe(
      1 + 40,
    );
  });

  it('§8.2: several slicing arguments given, the largest (requireOneSlicingArgument: false)', () => {
    const costs = estimator(`
      type User { age: Int @cost(weight: "2.0") }
      type Query {
        users(first: Int, last: Int): [User]
          @listSize(slicingArguments: ["first", "last"], requireOneSlicingArgument: false, assumedSize: 50)
      }
    `);
    expect(priced(costs.estimate({ query: '{ users(first: 2, last: 8) { age } }' })).fieldCost).toBe(1 + 16);
    // §9.2.4: assumedSize is the backup when none is given.
    expect(priced(costs.estimate({ query: '{ users { age } }' })).fieldCost).toBe(1 + 100);
  });

  // Example 18, with its Film and PageInfo types filled in.
  const FILMS = `
    type Film { title: String }
    type PageInfo { hasNextPage: Boolean }
    type FilmEdge { cursor: ID node: Film }
    type FilmConnection { edges: [FilmEdge] pageInfo: PageInfo }
    type Query {
      films(first: Int, after: ID, last: Int, before: ID): FilmConnection
        @listSize(slicingArguments: ["first", "last"], sizedFields: ["edges"])
    }
  `;

  it('example 18: sizedFields: the slicing argument of films sizes FilmConnection.edges', () => {
    const costs = estimator(FILMS);
    const estimate = priced(
      costs.estimate({ query: '{ films(first: 10) { edges { node { title } } pageInfo { hasNextPage } } }' }),
    );
    // films 1, edges 1 (once, on the one connection), node 1.0 on each of 10 edges, pageInfo 1.
    expect(estimate.fieldCost).toBe(1 + 1 + 10 + 1);
    // Query, FilmConnection, 10 FilmEdge, 10 Film, PageInfo.
    expect(estimate.typeCost).toBe(1 + 1 + 10 + 10 + 1);
    const last = priced(
      costs.estimate({
        query: 'query ($n: Int) { films(last: $n) { edges { cursor } } }',
        variables: { n: 4 },
      }),
    );
    expect(last.typeCost).toBe(1 + 1 + 4);
  });

  it('§8.4: requireOneSlicingArgument (the default) refuses none and refuses two, as a validation error', () => {
    const costs = estimator(FILMS);
    for (const query of [
      '{ films { edges { cursor } } }',
      '{ films(first: 1, last: 2) { edges { cursor } } }',
      '{ films(first: null) { edges { cursor } } }',
    ]) {
      const refusal = refused(costs.estimate({ query }));
      expect(refusal.errors[0]?.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
      expect(refusal.errors[0]?.message).toMatch(
        /^Field "Query.films" needs exactly one of its slicing arguments "first", "last"; \d given/,
      );
    }
    // Decided by the variables: a variable that is not given leaves the argument out.
    const query = 'query ($f: Int, $l: Int) { films(first: $f, last: $l) { edges { cursor } } }';
    expect(priced(costs.estimate({ query, variables: { f: 3 } })).typeCost).toBe(1 + 1 + 3);
    expect(refused(costs.estimate({ query, variables: {} })).errors[0]?.extensions.code).toBe(
      'GRAPHQL_VALIDATION_FAILED',
    );
    expect(refused(costs.estimate({ query, variables: { f: 1, l: 1 } })).errors[0]?.message).toMatch(
      /2 given/,
    );
  });
});

describe('§9 Validation of the schema', () => {
  const problems = (sdl: string) => {
    try {
      estimator(sdl);
    } catch (error) {
      return (error as Error).message;
    }
    return 'no problem';
  };

  it('§9.1.1: no @cost on an interface field', () => {
    expect(
      problems(
        'interface I { a: Int @cost(weight: "1") } type T implements I { a: Int } type Query { t: T }',
      ),
    ).toMatch(/I\.a: @cost is not allowed on an interface's field \(spec §9\.1\.1\)/);
  });

  it('§7.1: a weight must be a serialized Float', () => {
    expect(problems('type Query { a: Int @cost(weight: "two") }')).toMatch(
      /Query\.a: @cost\(weight: "two"\) is not a serialized Float/,
    );
  });

  it('§9.2.1-9.2.4: list size target, sized fields, slicing arguments, assumed size', () => {
    const message = problems(`
      type Page { items: [Int] total: Int }
      type Query {
        one: Int @listSize(assumedSize: 3)
        page(first: Int): Page @listSize(slicingArguments: ["first"], sizedFields: ["total", "missing"])
        wrong(first: String): [Int] @listSize(slicingArguments: ["first", "nope"])
        both(first: Int = 5): [Int] @listSize(slicingArguments: ["first"], assumedSize: 10, requireOneSlicingArgument: false)
      }
    `);
    expect(message).toMatch(
      /Query\.one: @listSize on a field that returns no list and names no sizedFields \(spec §9\.2\.1\)/,
    );
    expect(message).toMatch(
      /Query\.page: sizedFields names "total", which returns no list \(spec §9\.2\.2\)/,
    );
    expect(message).toMatch(
      /Query\.page: sizedFields names "missing", which Page does not define \(spec §9\.2\.2\)/,
    );
    expect(message).toMatch(
      /Query\.wrong: slicing argument "first" is String, not Int or Int! \(spec §9\.2\.3\)/,
    );
    expect(message).toMatch(
      /Query\.wrong: slicingArguments names "nope", which the field does not define \(spec §9\.2\.3\)/,
    );
    expect(message).toMatch(
      /Query\.both: assumedSize beside slicingArguments needs requireOneSlicingArgument: false and no slicing argument with a default \(spec §9\.2\.4\)/,
    );
  });
});
