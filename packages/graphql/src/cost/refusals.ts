import { type ASTNode, GraphQLError } from 'graphql';
import type { CostRefusal } from './types.js';

/*
 * The codes a GraphQL user expects (Apollo Server's names), so a server plugin can answer with them as they are:
 * each refusal is what the server itself would have answered, before any resolver ran.
 */

export type RefusalCode =
  /** Not a request at all: no query, variables that are not an object. */
  | 'BAD_REQUEST'
  /** The query text is not GraphQL, or has more tokens than `maxTokens`. */
  | 'GRAPHQL_PARSE_FAILED'
  /** graphql-js's specified rules, a fragment cycle, or a @listSize slicing rule of the cost spec. */
  | 'GRAPHQL_VALIDATION_FAILED'
  /** No operation by that name, or several operations and no name. */
  | 'OPERATION_RESOLUTION_FAILURE'
  /** Variables of the wrong type, or missing. */
  | 'BAD_USER_INPUT'
  /** Deeper, wider or more nested than the estimator's bounds. */
  | 'COST_BOUNDS_EXCEEDED';

/** A refusal of one error. */
export function refusal(
  code: RefusalCode,
  message: string,
  nodes?: ASTNode | readonly ASTNode[],
): CostRefusal {
  return { ok: false, errors: [new GraphQLError(message, { nodes, extensions: { code } })] };
}

/** graphql-js's own errors (syntax, validation, variables), each given the code. */
export function refusalOf(code: RefusalCode, errors: readonly GraphQLError[]): CostRefusal {
  return { ok: false, errors: errors.map((error) => withExtensions(error, { code })) };
}

/** A copy of `error` with `extensions` added (a code; a server's `http` status and headers, say). */
export function withExtensions(
  error: GraphQLError,
  extensions: Readonly<Record<string, unknown>>,
): GraphQLError {
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    originalError: error.originalError,
    extensions: { ...error.extensions, ...extensions },
  });
}
