import { buildSchema, type DocumentNode, type FieldNode, Kind, type SelectionSetNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { textNesting } from './bounds.js';
import { costDirectivesSdl, costEstimator } from './index.js';
import type { CostEstimate, CostRefusal } from './types.js';

/*
 * Pathological documents: each gets a CostRefusal with a clear message, in bounded time, and never a stack
 * overflow or a throw. The time bounds are generous (the machine is shared); a refusal found by recursion would
 * overflow the stack long before them.
 */

const schema = buildSchema(`${costDirectivesSdl}
  input Filter { and: [Filter] name: String }
  type User {
    name: String
    friends(first: Int): [User] @listSize(slicingArguments: ["first"])
    best: User
  }
  type Query {
    users(max: Int, filter: Filter, deep: [[[[Int]]]]): [User] @listSize(slicingArguments: ["max"])
    user: User
    echo(value: [Int]): Int
  }
`);

function refusedWith(result: CostEstimate | CostRefusal, code: string, message: RegExp): void {
  expect(result.ok).toBe(false);
  if (result.ok) return;
  expect(result.errors[0]?.extensions.code).toBe(code);
  expect(result.errors[0]?.message).toMatch(message);
}

function timed<T>(work: () => T): T {
  const started = performance.now();
  const result = work();
  expect(performance.now() - started).toBeLessThan(5_000);
  return result;
}

function nestedSelection(depth: number): SelectionSetNode {
  let set: SelectionSetNode = {
    kind: Kind.SELECTION_SET,
    selections: [{ kind: Kind.FIELD, name: { kind: Kind.NAME, value: 'name' } }],
  };
  for (let i = 0; i < depth; i += 1) {
    const field: FieldNode = {
      kind: Kind.FIELD,
      name: { kind: Kind.NAME, value: 'best' },
      selectionSet: set,
    };
    set = { kind: Kind.SELECTION_SET, selections: [field] };
  }
  return set;
}

describe('pathological documents', () => {
  const costs = costEstimator(schema);

  it('depth 10,000 as text: refused by a scan of its brackets, before the parser recurses', () => {
    const query = `{ user ${'{ best '.repeat(10_000)}{ name }${' }'.repeat(10_000)} }`;
    refusedWith(
      timed(() => costs.estimate({ query })),
      'COST_BOUNDS_EXCEEDED',
      /^The document nests more than 144 brackets deep\.$/,
    );
  });

  it('depth 10,000 as a DocumentNode built by code: refused by an iterative walk, before validation recurses', () => {
    const operation = {
      kind: Kind.OPERATION_DEFINITION,
      operation: 'query',
      selectionSet: nestedSelection(10_000),
    };
    const query = { kind: Kind.DOCUMENT, definitions: [operation] } as unknown as DocumentNode;
    refusedWith(
      timed(() => costs.estimate({ query })),
      'COST_BOUNDS_EXCEEDED',
      /^The operation nests fields 10001 deep; the limit is 64\.$/,
    );
  });

  it('depth 65 by text: the field depth is bounded, not only the brackets', () => {
    const query = `{ user ${'{ best '.repeat(64)}{ name }${' }'.repeat(64)} }`;
    refusedWith(
      costs.estimate({ query }),
      'COST_BOUNDS_EXCEEDED',
      /^The operation nests fields 66 deep; the limit is 64\.$/,
    );
  });

  it('depth reached through a chain of fragments, each one level deeper', () => {
    const fragments = Array.from(
      { length: 200 },
      (_, i) => `fragment F${i} on User { best { ...F${i + 1} } }`,
    );
    const query = `{ user { ...F0 } } ${fragments.join(' ')} fragment F200 on User { name }`;
    refusedWith(
      costs.estimate({ query }),
      'COST_BOUNDS_EXCEEDED',
      /^The operation nests fields 202 deep; the limit is 64\.$/,
    );
  });

  it('100,000 fields: refused by the parser at maxTokens, or by the field count when maxTokens allows them', () => {
    const query = `{ user { ${'name '.repeat(100_000)}} }`;
    refusedWith(
      timed(() => costs.estimate({ query })),
      'GRAPHQL_PARSE_FAILED',
      /^Syntax Error: Document contains more tha[nt] 20000 tokens\. Parsing aborted\.$/,
    );
    const roomy = costEstimator(schema, { maxTokens: 1_000_000 });
    refusedWith(
      timed(() => roomy.estimate({ query })),
      'COST_BOUNDS_EXCEEDED',
      /^The document selects 100001 fields; the limit is 10000\.$/,
    );
  });

  it('fragment cycles, short and 5,000 long: refused without recursion, in the words of graphql-js', () => {
    refusedWith(
      costs.estimate({
        query: '{ user { ...A } } fragment A on User { ...B } fragment B on User { name ...A }',
      }),
      'GRAPHQL_VALIDATION_FAILED',
      /^Cannot spread fragment "A" within itself via "B"\.$/,
    );
    const chain = Array.from(
      { length: 5_000 },
      (_, i) => `fragment F${i} on User { ...F${(i + 1) % 5_000} }`,
    );
    const roomy = costEstimator(schema, { maxTokens: 1_000_000 });
    refusedWith(
      timed(() => roomy.estimate({ query: `{ user { ...F0 } } ${chain.join(' ')}` })),
      'GRAPHQL_VALIDATION_FAILED',
      /^Cannot spread fragment "F0" within itself via "F1", "F2", /,
    );
  });

  it('20,000 aliases: refused by the field count', () => {
    const aliases = Array.from({ length: 20_000 }, (_, i) => `a${i}: name`).join(' ');
    const roomy = costEstimator(schema, { maxTokens: 1_000_000 });
    refusedWith(
      timed(() => roomy.estimate({ query: `{ user { ${aliases} } }` })),
      'COST_BOUNDS_EXCEEDED',
      /^The document selects 20001 fields; the limit is 10000\.$/,
    );
  });

  it('fragments that double at each level (2^40 fields executed): refused by the fields priced, fragments expanded', () => {
    const levels = Array.from(
      { length: 40 },
      (_, i) => `fragment F${i} on User { a: best { ...F${i + 1} } b: best { ...F${i + 1} } }`,
    );
    const query = `{ user { ...F0 } } ${levels.join(' ')} fragment F40 on User { name }`;
    refusedWith(
      timed(() => costs.estimate({ query })),
      'COST_BOUNDS_EXCEEDED',
      /^The operation is too large to price: more than 10000 fields, fragments expanded\.$/,
    );
  });

  it('deeply nested lists of arguments, as text and as variables', () => {
    const query = `{ echo(value: ${'['.repeat(10_000)}1${']'.repeat(10_000)}) }`;
    refusedWith(
      timed(() => costs.estimate({ query })),
      'COST_BOUNDS_EXCEEDED',
      /brackets deep/,
    );
    let filter: Record<string, unknown> = { name: 'x' };
    for (let i = 0; i < 10_000; i += 1) filter = { and: [filter] };
    const byVariable = 'query ($f: Filter) { users(max: 1, filter: $f) { name } }';
    refusedWith(
      timed(() => costs.estimate({ query: byVariable, variables: { f: filter } })),
      'COST_BOUNDS_EXCEEDED',
      /^The variables nest more than 144 levels deep\.$/,
    );
  });

  it('a cyclic variables object (made in code, not JSON) is refused, not walked forever', () => {
    const filter: Record<string, unknown> = { name: 'x' };
    filter.and = [filter];
    const query = 'query ($f: Filter) { users(max: 1, filter: $f) { name } }';
    refusedWith(
      timed(() => costs.estimate({ query, variables: { f: filter } })),
      'COST_BOUNDS_EXCEEDED',
      /nest more than/,
    );
  });

  it('a document within the bounds is priced', () => {
    const query = `{ user ${'{ best '.repeat(60)}{ name }${' }'.repeat(60)} }`;
    expect(costs.estimate({ query }).ok).toBe(true);
  });
});

describe('textNesting', () => {
  it('counts brackets outside strings, block strings and comments', () => {
    expect(textNesting('{ a(x: "{{{{", y: """ [[[ \\""" ((( """) # {{{{{\n { b } }', 100)).toBe(2);
    expect(textNesting('{ a(x: [[[1]]]) }', 100)).toBe(5);
    expect(textNesting('[[[[[[', 3)).toBe(4);
  });
});
