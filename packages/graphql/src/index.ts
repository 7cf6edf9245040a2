/**
 * @sluice/graphql: GraphQL cost budgets. Filled in by issue 43: the cost spec estimator (cost/), the budget
 * glue and the server plugins.
 */
export {
  type CostEstimate,
  type CostEstimator,
  type CostRefusal,
  costDirectivesSdl,
  costEstimator,
  type EstimatorOptions,
  type GraphqlRequest,
  type OperationFacts,
} from './cost/index.js';
