/**
 * @sluice/graphql: GraphQL cost budgets. The IBM cost spec's estimator (`costEstimator`), the descriptors rules
 * read, and the hooks a Sluice adapter decides GraphQL operations with (`graphqlHooks`). The server plugins
 * are entries of their own, so that a user of one server loads no other: `@sluice/graphql/apollo`,
 * `@sluice/graphql/yoga`, `@sluice/graphql/mercurius`.
 */
export {
  type CostEstimate,
  type CostEstimator,
  type CostExtension,
  type CostRefusal,
  costDirectivesSdl,
  costEstimator,
  type EstimatorOptions,
  type GraphqlRequest,
  type ListSizeExtension,
  type OperationFacts,
} from './cost/index.js';
export {
  CLIENT_NAME_HEADER,
  CLIENT_VERSION_HEADER,
  GRAPHQL_DESCRIPTORS,
  rootFieldNames,
} from './descriptors.js';
export type { CostBudgetOptions, InAdapterOptions } from './gate.js';
export { type GraphqlDenial, type GraphqlHooks, type GraphqlHooksOptions, graphqlHooks } from './hooks.js';
export type {
  BudgetOptions,
  DescriptorsHook,
  DescriptorValue,
  GraphqlLogger,
  StandaloneOptions,
} from './options.js';
export { type QueryCost, type ThrottleStatus, TOO_EXPENSIVE } from './responses.js';
