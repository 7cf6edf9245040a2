/**
 * @sluice/graphql: GraphQL cost budgets. Filled in by issue 43: the cost spec estimator (cost/), the budget
 * glue and the server plugins.
 */
export {};
