/**
 * The IBM GraphQL Cost Directive specification's estimator (https://ibm.github.io/graphql-specs/cost-spec.html):
 * @cost and @listSize read once per schema, each document parsed, validated and compiled once, each request
 * priced from its variables, and the same formula over the result's data.
 */
export type { CostExtension, ListSizeExtension } from './directives.js';
export { costEstimator } from './estimator.js';
export { type RefusalCode, withExtensions } from './refusals.js';
export type {
  CostEstimate,
  CostEstimator,
  CostRefusal,
  EstimatorOptions,
  GraphqlRequest,
  OperationFacts,
} from './types.js';

/** The SDL of the spec's two directives (§7, §8), for a schema to include. */
export const costDirectivesSdl = `directive @cost(weight: String!) on ARGUMENT_DEFINITION | ENUM | FIELD_DEFINITION | INPUT_FIELD_DEFINITION | OBJECT | SCALAR

directive @listSize(assumedSize: Int, slicingArguments: [String!], sizedFields: [String!], requireOneSlicingArgument: Boolean = true) on FIELD_DEFINITION
`;
