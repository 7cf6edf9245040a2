import { buildSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { costDirectivesSdl, costEstimator } from './cost/index.js';
import { clientDescriptors, operationDescriptors, rootFieldNames, unitDescriptors } from './descriptors.js';

const schema = buildSchema(`${costDirectivesSdl}
type Query { books(first: Int!): [Book!]! @listSize(slicingArguments: ["first"]) me: User search: [Book!]! }
type Mutation { addBook(title: String!): Book @cost(weight: "10") }
type Book { title: String! }
type User { name: String! }
`);
const estimator = costEstimator(schema);

function describeQuery(query: string, operationName?: string) {
  const estimate = estimator.estimate({ query, operationName: operationName ?? null });
  if (!estimate.ok) throw new Error(estimate.errors.map(String).join('; '));
  return operationDescriptors(estimate);
}

describe('operation descriptors', () => {
  it('name the operation, its type, its root fields (a list and one each) and its estimate', () => {
    const query = 'query Shelf { me { name } books(first: 2) { title } }';
    const estimate = estimator.estimate({ query });
    expect(describeQuery(query)).toEqual({
      graphql_operation: 'Shelf',
      graphql_type: 'query',
      graphql_fields: 'books,me',
      'graphql_field.books': 'true',
      'graphql_field.me': 'true',
      graphql_cost: String(estimate.ok ? estimate.cost : Number.NaN),
    });
  });

  it('read root fields by their names, never their aliases, through fragments and inline fragments', () => {
    const query = `query Q { s: search { title } ...F ... on Query { me { name } } __typename }
      fragment F on Query { other: books(first: 1) { title } ...G } fragment G on Query { search { title } }`;
    const estimate = estimator.estimate({ query });
    expect(estimate.ok).toBe(true);
    if (!estimate.ok) return;
    expect(rootFieldNames(estimate.document, 'Q')).toEqual(['books', 'me', 'search']);
  });

  it('follow the cost of each request when an operation is described again (kept per operation)', () => {
    const query = 'query Page($n: Int!) { books(first: $n) { title } }';
    const of = (n: number) => {
      const estimate = estimator.estimate({ query, variables: { n } });
      if (!estimate.ok) throw new Error(estimate.errors.map(String).join('; '));
      return operationDescriptors(estimate);
    };
    const two = of(2);
    const costs = [two, of(20), of(2)].map((found) => Number(found.graphql_cost));
    expect(costs[1]).toBeGreaterThan(costs[0] ?? Number.POSITIVE_INFINITY);
    expect(costs[2]).toBe(costs[0]);
    expect(of(20)).toEqual({ ...two, graphql_cost: String(costs[1]) });
    const two2 = 'query A { me { name } } query B { search { title } }';
    expect(describeQuery(two2, 'A').graphql_fields).toBe('me');
    expect(describeQuery(two2, 'B').graphql_fields).toBe('search');
  });

  it('leave out the name of an anonymous operation, and describe the chosen one of several', () => {
    expect(describeQuery('{ me { name } }')).not.toHaveProperty('graphql_operation');
    const two = 'query A { me { name } } mutation B { addBook(title: "x") { title } }';
    expect(describeQuery(two, 'B')).toMatchObject({
      graphql_operation: 'B',
      graphql_type: 'mutation',
      graphql_fields: 'addBook',
    });
  });

  it('describe operations decided as one by their union, the heaviest type and the costs summed', () => {
    const a = describeQuery('query A { me { name } }');
    const b = describeQuery('mutation B { addBook(title: "x") { title } }');
    expect(unitDescriptors([a])).toEqual(a);
    expect(unitDescriptors([a, b, a])).toEqual({
      graphql_operation: 'A,B',
      graphql_type: 'mutation',
      graphql_fields: 'addBook,me',
      'graphql_field.addBook': 'true',
      'graphql_field.me': 'true',
      graphql_cost: String(Number(a.graphql_cost) * 2 + Number(b.graphql_cost)),
      graphql_batch: '3',
    });
  });
});

describe('client descriptors', () => {
  const headers = (values: Record<string, string>) => (name: string) => values[name];

  it('read the Apollo client-awareness headers', () => {
    expect(
      clientDescriptors(
        headers({ 'apollographql-client-name': 'ios-app', 'apollographql-client-version': '4.2.0' }),
      ),
    ).toEqual({ graphql_client_name: 'ios-app', graphql_client_version: '4.2.0' });
  });

  it('leave out an empty or oversized value: no client is named so', () => {
    expect(clientDescriptors(headers({ 'apollographql-client-name': ' ' }))).toEqual({});
    expect(clientDescriptors(headers({ 'apollographql-client-name': 'x'.repeat(129) }))).toEqual({});
  });
});
