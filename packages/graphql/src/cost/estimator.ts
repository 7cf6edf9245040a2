import { assertValidSchema, type GraphQLSchema, getVariableValues } from 'graphql';
import { actualCosts } from './actual.js';
import { jsonNesting, nestingFor } from './bounds.js';
import { compileOperation } from './compile.js';
import {
  chooseOperation,
  DocumentCache,
  type DocumentCache as Documents,
  type OperationEntry,
} from './documents.js';
import type { EvalContext } from './dyn.js';
import { Estimate, type EstimateSource } from './estimate.js';
import { type Costs, evaluatePlan } from './evaluate.js';
import { costModel } from './model.js';
import { type Settings, settingsOf } from './options.js';
import type { TypePlan } from './plan.js';
import { refusal, refusalOf } from './refusals.js';
import type { CostEstimate, CostEstimator, CostRefusal, EstimatorOptions, GraphqlRequest } from './types.js';

/*
 * The estimator: per request, a cache lookup (document), a choice of operation, the variables coerced when the
 * operation declares any, a plan lookup (per @skip/@include values) and the plan's evaluation. Everything else
 * was done once per schema (model.ts) or once per document (documents.ts, compile.ts).
 */

type Variables = Readonly<Record<string, unknown>>;

const NO_VARIABLES: Variables = Object.freeze({});
/** Plans kept per operation for distinct @skip / @include values; more are compiled per request. */
const PLANS_PER_OPERATION = 32;

interface Compiled {
  readonly plan: TypePlan;
  /** The estimate itself, when no variable changes it. */
  readonly fixed: Estimate | undefined;
}

/** Built once per schema (reads @cost / @listSize from the schema's AST nodes and extensions). */
export function costEstimator(schema: GraphQLSchema, options?: EstimatorOptions): CostEstimator {
  const settings = settingsOf(options);
  assertValidSchema(schema);
  const model = costModel(schema);
  const bounds = {
    maxDepth: settings.maxDepth,
    maxFields: settings.maxFields,
    maxNesting: nestingFor(settings.maxDepth),
  };
  const documents = new DocumentCache(model, {
    bounds,
    maxTokens: settings.maxTokens,
    cacheSize: settings.cacheSize,
    forbidIntrospection: settings.introspection === 'forbidden',
  });
  return {
    estimate: (request) => estimate(documents, settings, request),
    actual: (given, variables, data) => actual(documents, settings, given, variables, data),
  };
}

function estimate(
  documents: Documents,
  settings: Settings,
  request: GraphqlRequest,
): CostEstimate | CostRefusal {
  const query = request?.query;
  let entry: ReturnType<Documents['ofText']>;
  if (typeof query === 'string' && query.trim() !== '') entry = documents.ofText(query);
  else if (typeof query === 'object' && query !== null) entry = documents.ofDocument(query);
  else return refusal('BAD_REQUEST', 'GraphQL operations must contain a non-empty `query`.');
  if (!entry.ok) return entry;
  const operation = chooseOperation(entry, request.operationName);
  if (!('node' in operation)) return operation;
  const variables = coerce(documents, operation, request.variables);
  if (!isVariables(variables)) return variables;
  const compiled = planOf(documents, settings, operation, variables);
  if (!('plan' in compiled)) return compiled;
  if (compiled.fixed !== undefined) return compiled.fixed;
  const context: EvalContext = { variables, refusal: undefined };
  const costs = evaluatePlan(compiled.plan, context);
  if (context.refusal !== undefined) return context.refusal;
  return estimateOf(settings, costs, operation, compiled.plan, variables, request.variables);
}

function isVariables(value: Variables | CostRefusal): value is Variables {
  return value === NO_VARIABLES || !('ok' in value && value.ok === false && 'errors' in value);
}

function estimateOf(
  settings: Settings,
  costs: Costs,
  operation: OperationEntry,
  plan: TypePlan,
  variables: Variables,
  given: unknown,
): Estimate {
  const definitions = operation.node.variableDefinitions ?? [];
  const source = { plan, variables, given, definitions };
  return new Estimate(
    costFrom(settings, costs),
    costs.field,
    costs.type,
    operation.facts,
    operation.document,
    source,
  );
}

/** The cost as `costOf` counts it: an integer >= 0, rounded up (weights are floats), at most 2^53 - 1. */
function costFrom(settings: Settings, costs: Costs): number {
  const total =
    settings.costOf === 'fields'
      ? costs.field
      : settings.costOf === 'types'
        ? costs.type
        : costs.field + costs.type;
  if (Number.isNaN(total)) return Number.MAX_SAFE_INTEGER;
  // A float sum such as 0.7 + 0.1 + 0.2 lands a hair above 1: that hair is not a unit of cost.
  return total <= 0 ? 0 : Math.min(Number.MAX_SAFE_INTEGER, Math.ceil(total - 1e-9));
}

/** The request's variables as graphql-js coerces them for execution (defaults applied), or BAD_USER_INPUT. */
function coerce(
  documents: Documents,
  operation: OperationEntry,
  given: GraphqlRequest['variables'],
): Variables | CostRefusal {
  if (given !== undefined && given !== null && (typeof given !== 'object' || Array.isArray(given))) {
    return refusal('BAD_REQUEST', '`variables` must be an object.');
  }
  const definitions = operation.node.variableDefinitions;
  if (definitions === undefined || definitions.length === 0) return NO_VARIABLES;
  const limit = documents.settings.bounds.maxNesting;
  if (
    operation.coercion.recursive &&
    given !== undefined &&
    given !== null &&
    jsonNesting(given, limit) > limit
  ) {
    return refusal('COST_BOUNDS_EXCEEDED', `The variables nest more than ${limit} levels deep.`);
  }
  const result = operation.coercion.coerce(given ?? NO_VARIABLES);
  return 'errors' in result ? refusalOf('BAD_USER_INPUT', result.errors) : result.coerced;
}

/** The operation's plan for these variables' @skip / @include values: compiled once, kept per values. */
function planOf(
  documents: Documents,
  settings: Settings,
  operation: OperationEntry,
  variables: Variables,
): Compiled | CostRefusal {
  const names = operation.conditionVariables;
  let key = '';
  for (const name of names) key += variables[name] === true ? '1' : variables[name] === false ? '0' : '-';
  const known = operation.plans.get(key) as Compiled | CostRefusal | undefined;
  if (known !== undefined) return known;
  const conditions = (name: string) => {
    const value = variables[name];
    return typeof value === 'boolean' ? value : undefined;
  };
  const plan = compileOperation(documents.model, operation.node, operation.fragments, conditions, settings);
  const compiled = 'errors' in plan ? plan : fixedOf(settings, operation, plan);
  if (operation.plans.size < PLANS_PER_OPERATION) operation.plans.set(key, compiled);
  return compiled;
}

function fixedOf(settings: Settings, operation: OperationEntry, plan: TypePlan): Compiled {
  if (Number.isNaN(plan.fixedField)) return { plan, fixed: undefined };
  const costs = { field: plan.fixedField, type: plan.fixedType };
  return {
    plan,
    fixed: estimateOf(settings, costs, operation, plan, NO_VARIABLES, undefined),
  };
}

/** Query Response Analysis: the estimate's formula over the data execution returned. */
function actual(
  documents: Documents,
  settings: Settings,
  given: CostEstimate,
  variables: GraphqlRequest['variables'],
  data: unknown,
): number {
  const source = Estimate.sourceOf(given);
  if (source === undefined) return given.cost;
  const context: EvalContext = { variables: variablesFor(documents, source, variables), refusal: undefined };
  return costFrom(settings, actualCosts(source.plan, context, data));
}

/** The estimate's own coerced variables, unless other variables are handed in (and coerce). */
function variablesFor(
  documents: Documents,
  source: EstimateSource,
  variables: GraphqlRequest['variables'],
): Variables {
  const same = variables === undefined || variables === null || variables === source.given;
  if (same || source.definitions.length === 0 || !Number.isNaN(source.plan.fixedField))
    return source.variables;
  const result = getVariableValues(documents.model.schema, source.definitions, variables, { maxErrors: 1 });
  return result.coerced ?? source.variables;
}
