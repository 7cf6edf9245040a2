import { buildSchema, execute, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { costDirectivesSdl, costEstimator } from './index.js';
import type { CostEstimate, CostRefusal } from './types.js';

/*
 * Actual cost (spec §5.1.3, Query Response Analysis): the estimate's formula over the data execution returned.
 * Settling down (lists shorter than the estimate assumed) and up (a resolver returning more than its
 * assumedSize), on results graphql-js really executed.
 */

const schema = buildSchema(`${costDirectivesSdl}
  interface Animal { name: String }
  type Dog implements Animal { name: String barks: Int @cost(weight: "3.0") }
  type Cat implements Animal { name: String }
  type User {
    name: String
    age: Int @cost(weight: "2.0")
    pets: [Animal] @listSize(assumedSize: 2)
    scores: [[Int]]
  }
  type Query {
    users(max: Int): [User] @listSize(slicingArguments: ["max"])
    top: [User] @listSize(assumedSize: 3)
  }
`);

function priced(result: CostEstimate | CostRefusal): CostEstimate {
  if (!result.ok) throw new Error(result.errors.map((error) => error.message).join('; '));
  return result;
}

async function run(rootValue: Record<string, unknown>, query: string, variables?: Record<string, unknown>) {
  const result = await execute({ schema, document: parse(query), rootValue, variableValues: variables });
  return result.data;
}

const people = (count: number) => Array.from({ length: count }, (_, i) => ({ name: `u${i}`, age: 20 + i }));

describe('actual cost', () => {
  const costs = costEstimator(schema, { costOf: 'fields' });

  it('settles down: three users where the slicing argument allowed ten', async () => {
    const query = 'query ($n: Int) { users(max: $n) { name age } }';
    const variables = { n: 10 };
    const estimate = priced(costs.estimate({ query, variables }));
    expect(estimate.cost).toBe(1 + 10 * 2);
    const data = await run({ users: people(3) }, query, variables);
    expect(costs.actual(estimate, variables, data)).toBe(1 + 3 * 2);
  });

  it('settles up: a resolver returning more than its assumedSize', async () => {
    const query = '{ top { age } }';
    const estimate = priced(costs.estimate({ query }));
    expect(estimate.cost).toBe(1 + 3 * 2);
    const data = await run({ top: people(8) }, query);
    expect(costs.actual(estimate, undefined, data)).toBe(1 + 8 * 2);
  });

  it('a null list has no items: the field ran (its weight), nothing below it did', async () => {
    const estimate = priced(costs.estimate({ query: '{ users(max: 5) { age } }' }));
    expect(costs.actual(estimate, null, await run({ users: null }, '{ users(max: 5) { age } }'))).toBe(1);
    expect(costs.actual(estimate, null, null)).toBe(0);
    expect(costs.actual(estimate, null, undefined)).toBe(0);
  });

  it('partial data: an error nulls a field, a key cut off by an error above costs nothing', async () => {
    const query = '{ users(max: 5) { name age } }';
    const estimate = priced(costs.estimate({ query }));
    const failing = { name: 'x', age: () => Promise.reject(new Error('down')) };
    const result = await execute({
      schema,
      document: parse(query),
      rootValue: { users: [failing, ...people(1)] },
    });
    expect(result.errors).toHaveLength(1);
    // Both ages ran (2.0 each); one answered null.
    expect(costs.actual(estimate, null, result.data)).toBe(1 + 2 + 2);
    expect(costs.actual(estimate, null, { users: [{ name: 'x' }] })).toBe(1);
  });

  it('abstract types: by __typename when asked, else the heaviest type the object may be', () => {
    const query = '{ top { pets { __typename name ... on Dog { barks } } } }';
    const told = priced(costs.estimate({ query }));
    // top 1, 3 × pets 1, 3 × 2 × barks 3 (a Dog, the heaviest).
    expect(told.cost).toBe(1 + 3 + 18);
    const data = {
      top: [
        {
          pets: [
            { __typename: 'Cat', name: 'c' },
            { __typename: 'Dog', name: 'd', barks: 1 },
          ],
        },
      ],
    };
    expect(costs.actual(told, null, data)).toBe(1 + 1 + 3);
    const untold = priced(costs.estimate({ query: '{ top { pets { name ... on Dog { barks } } } }' }));
    const cats = { top: [{ pets: [{ name: 'c' }, { name: 'd' }] }] };
    expect(costs.actual(untold, null, cats)).toBe(1 + 1);
    const dogs = { top: [{ pets: [{ name: 'd', barks: 1 }] }] };
    expect(costs.actual(untold, null, dogs)).toBe(1 + 1 + 3);
  });

  it('lists of lists count every item, and the type cost counts what was returned', () => {
    const types = costEstimator(schema, { costOf: 'types' });
    const estimate = priced(types.estimate({ query: '{ top { scores } }' }));
    // Query, 3 users, 10 × 10 Ints at 0.0.
    expect(estimate.cost).toBe(1 + 3);
    expect(types.actual(estimate, null, { top: [{ scores: [[1, 2], [3]] }, { scores: null }] })).toBe(1 + 2);
  });

  it('data of the wrong shape is priced as far as it fits, never thrown on', () => {
    const estimate = priced(costs.estimate({ query: '{ users(max: 5) { age } }' }));
    expect(costs.actual(estimate, null, { users: 'nope' })).toBe(1);
    expect(costs.actual(estimate, null, [1, 2])).toBe(0);
    expect(costs.actual(estimate, null, { users: [null, 3, { age: 1 }] })).toBe(1 + 2);
  });

  it('arguments priced from the variables given, which the estimate had coerced', () => {
    const filtered = costEstimator(
      buildSchema(`${costDirectivesSdl}
        input Filter { deep: Boolean @cost(weight: "4.0") }
        type Query { find(filter: Filter): [String] @cost(weight: "1.0") }
      `),
      { costOf: 'fields' },
    );
    const query = 'query ($f: Filter) { find(filter: $f) }';
    const variables = { f: { deep: true } };
    const estimate = priced(filtered.estimate({ query, variables }));
    expect(estimate.cost).toBe(1 + 1 + 4);
    expect(filtered.actual(estimate, variables, { find: ['a'] })).toBe(6);
    expect(filtered.actual(estimate, { f: {} }, { find: ['a'] })).toBe(2);
  });
});
