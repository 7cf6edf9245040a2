import type { DocumentNode, GraphQLError } from 'graphql';

/** One GraphQL request as a server receives it. */
export interface GraphqlRequest {
  /** A string is parsed (and cached by its text); a DocumentNode is used as is (cached by identity). */
  readonly query?: string | DocumentNode;
  readonly operationName?: string | null;
  readonly variables?: Readonly<Record<string, unknown>> | null;
}

/** What a rate limiter may key or describe a request by, read from the chosen operation. */
export interface OperationFacts {
  /** The operation's name, if it has one. */
  readonly name: string | undefined;
  readonly type: 'query' | 'mutation' | 'subscription';
  /** Response names of the root selection's fields, fragments resolved, in document order, each once. */
  readonly rootFields: readonly string[];
}

/** An operation priced before execution. */
export interface CostEstimate {
  readonly ok: true;
  /**
   * The IBM cost spec's estimated cost, an integer >= 0: by default its field cost plus its type cost
   * (EstimatorOptions.costOf), rounded up.
   */
  readonly cost: number;
  /** The spec's field cost (§5.3.2.2): each field's weight, arguments and directives, times the times it runs. */
  readonly fieldCost: number;
  /** The spec's type cost (§5.3.2.1): each object, scalar and enum value returned, times its type's weight. */
  readonly typeCost: number;
  readonly operation: OperationFacts;
  /** Parsed and validated (graphql-js specifiedRules), cached. */
  readonly document: DocumentNode;
}

/** A request that cannot be priced: it would not execute either, or it is beyond the estimator's bounds. */
export interface CostRefusal {
  readonly ok: false;
  /**
   * Syntax errors, validation errors, unknown operation name, bad variables, or bounds exceeded; each with
   * extensions.code (GRAPHQL_PARSE_FAILED, GRAPHQL_VALIDATION_FAILED, BAD_USER_INPUT,
   * OPERATION_RESOLUTION_FAILURE, COST_BOUNDS_EXCEEDED).
   */
  readonly errors: readonly GraphQLError[];
}

export interface EstimatorOptions {
  /** A list field with no @listSize (and no slicing argument): its assumed size. Default 10. */
  readonly defaultListSize?: number;
  /** Deepest field nesting priced; deeper documents are refused (COST_BOUNDS_EXCEEDED). Default 64. */
  readonly maxDepth?: number;
  /** Most field selections priced, fragments expanded; more are refused (COST_BOUNDS_EXCEEDED). Default 10,000. */
  readonly maxFields?: number;
  /** Most tokens parsed (graphql-js `maxTokens`); more are refused (GRAPHQL_PARSE_FAILED). Default 20,000. */
  readonly maxTokens?: number;
  /** Documents kept, by query text and by DocumentNode (LRU). Default 1,000. */
  readonly cacheSize?: number;
  /**
   * __schema, __type and __typename: 'free' (default) leaves them out of the cost; 'priced' prices them as any
   * field (introspection types weigh the spec's defaults); 'forbidden' refuses __schema and __type (graphql-js's
   * NoSchemaIntrospectionCustomRule, GRAPHQL_VALIDATION_FAILED) and leaves __typename free.
   */
  readonly introspection?: 'free' | 'priced' | 'forbidden';
  /**
   * What `cost` counts: 'both' (default) the field cost plus the type cost, 'fields' the field cost alone (the
   * figure the spec's examples give), 'types' the type cost alone.
   */
  readonly costOf?: 'both' | 'fields' | 'types';
}

export interface CostEstimator {
  estimate(request: GraphqlRequest): CostEstimate | CostRefusal;
  /** The same formula over the result's real list sizes (data as execution returned it). */
  actual(estimate: CostEstimate, variables: GraphqlRequest['variables'], data: unknown): number;
}
