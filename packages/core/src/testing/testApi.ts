// The test runner's functions, as the store contract suite asks for them. The suite takes them as an argument
// (vitest's, Jest's), so that importing @sluice/core/testing loads no test runner: a user without vitest can
// import it, and one with vitest gets the version of their own project.

/** What the suite asks of an `expect(actual)`: vitest's and Jest's have these. */
export interface Expectation {
  toBe(expected: unknown): void;
  toEqual(expected: unknown): void;
  toMatchObject(expected: object): void;
}

/** The test runner's functions the suite defines its cases with: `import * as vitest from 'vitest'` is one. */
export interface TestApi {
  describe(name: string, body: () => void): unknown;
  it(name: string, body: () => Promise<void>): unknown;
  beforeEach(hook: () => Promise<void>): unknown;
  afterEach(hook: () => Promise<void>): unknown;
  expect(actual: unknown): Expectation;
}
