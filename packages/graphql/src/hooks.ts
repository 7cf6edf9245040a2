import type { DeniedResponse, RateLimitInfo } from '@sluice/core';
import type { HeaderValues } from '@sluice/core/http';
import { GraphQLError } from 'graphql';
import { type Admission, type Priced, price, Unit } from './budget.js';
import type { CostEstimator } from './cost/index.js';
import { GRAPHQL_DESCRIPTORS, requestDescriptors, unitDescriptors } from './descriptors.js';
import { type BudgetOptions, type BudgetSettings, budgetSettings, Notice } from './options.js';
import { nodeHeaders, nodeRequestOf, operationsOf } from './request.js';
import { deniedError, deniedStatus, queryCost } from './responses.js';

/*
 * Inside a Sluice adapter (Express, Fastify, Koa): the adapter decides the GraphQL route after its body is
 * parsed (`afterBody`), with the descriptors these hooks read from the body, so the GraphQL budgets and the
 * HTTP rules of the request are decided in the adapter's ONE store call. The server's plugin then only settles
 * (through the adapter's `rateLimit.settle`) and writes `extensions.cost`; a denial is written by the adapter's
 * `onDenied` as a GraphQL response (`denial`).
 */

/** Options of {@link graphqlHooks}: the budget's, but the estimator (given first) and the limiter (the adapter's). */
export interface GraphqlHooksOptions extends Omit<BudgetOptions, 'estimator'> {
  /**
   * The rate-limit info the adapter put on its request. Default: `req.rateLimit` (Express, Fastify), else
   * `ctx.state.rateLimit` (Koa).
   */
  readonly info?: (req: object) => RateLimitInfo | undefined;
}

/** A denied GraphQL request's response, for the adapter's `onDenied` to send as JSON. */
export interface GraphqlDenial {
  readonly status: number;
  readonly headers: HeaderValues;
  /** A GraphQL response (an array of them for a batch): the THROTTLED error and `extensions.cost`. */
  readonly body: unknown;
}

/** What an adapter is given (`descriptors`) and calls from its `onDenied` (`denial`). */
export interface GraphqlHooks {
  /**
   * The adapter's `descriptors` option (merge your own into its answer): the GraphQL descriptors of the request's
   * operations, a batch's as one, and `graphql_cost`, their estimate summed (`0` for operations refused or a
   * request that is not GraphQL: nothing to charge).
   */
  readonly descriptors: (req: object) => Readonly<Record<string, string>>;
  /**
   * For the adapter's `onDenied`: the GraphQL response of a denied request these hooks described (send its
   * status, headers and JSON body); undefined for any other request (let the adapter send its own).
   */
  readonly denial: (req: object, denied: DeniedResponse) => GraphqlDenial | undefined;
}

/** One request as the hooks saw it: its operations priced, and their unit once a server asked for it. */
export interface HooksEntry {
  readonly req: object;
  readonly ops: readonly Priced[];
  readonly batch: boolean;
  unit?: Unit;
}

/** The part of the hooks the server plugins read. */
export interface HooksCore {
  readonly settings: BudgetSettings;
  /** The entry of the request behind a server's context (any of the adapter's request, its Node request). */
  entryOf(req: object): HooksEntry | undefined;
  /** The unit of that request: one decision (the adapter's) for all its operations, settled once. */
  unitOf(entry: HooksEntry): Unit;
  readonly unpriced: Notice;
}

const cores = new WeakMap<GraphqlHooks, HooksCore>();

/** The core of hooks made by {@link graphqlHooks}; undefined for anything else. */
export function hooksCore(hooks: GraphqlHooks): HooksCore | undefined {
  return cores.get(hooks);
}

const NOTHING_TO_CHARGE = Object.freeze({ [GRAPHQL_DESCRIPTORS.cost]: '0' });
const HOOK_NAMES = ['maxCost', 'throttledStatus', 'extensions', 'logger', 'info'] as const;

/**
 * The hooks that let a Sluice adapter decide GraphQL operations: give `descriptors` to the adapter, decide the
 * GraphQL route after its body (`afterBody`), send `denial(...)` from its `onDenied`, and give the hooks to the
 * server's plugin (`apolloCostBudget({hooks})`, `useCostBudget({hooks})`, `mercuriusCostBudget(app, {hooks})`).
 */
export function graphqlHooks(estimator: CostEstimator, options: GraphqlHooksOptions = {}): GraphqlHooks {
  const settings = budgetSettings('graphqlHooks', { ...options, estimator }, ['estimator', ...HOOK_NAMES]);
  const info = options.info ?? defaultInfo;
  if (typeof info !== 'function') throw new TypeError('graphqlHooks: option "info" must be a function');
  // A request's entry rides on its Node request under a symbol of these hooks: a WeakMap keyed by an object
  // that lives one request costs the garbage collector an ephemeron per request.
  const entries = Symbol('sluice.graphql');
  const entryOf = (req: object) => (nodeRequestOf(req) as Carrier)[entries];
  const failing = new Notice(
    settings.logger,
    'SLUICE_GRAPHQL_ESTIMATE_FAILED: the cost estimator threw; requests are charged nothing until it prices again',
  );

  function descriptors(req: object): Readonly<Record<string, string>> {
    const node = nodeRequestOf(req);
    const found = operationsOf(req, node);
    // Not a GraphQL request, or one seen before its body was parsed (the plugin then says `afterBody`).
    if (found === undefined) return NOTHING_TO_CHARGE;
    let ops: Priced[];
    try {
      ops = found.operations.map((op) =>
        op instanceof GraphQLError ? { ok: false, errors: [op] } : price(settings, op),
      );
      failing.clear();
    } catch (error) {
      failing.say(String(error));
      return NOTHING_TO_CHARGE;
    }
    (node as Carrier)[entries] = { req, ops, batch: found.batch };
    const priced = ops.flatMap((op) => (op.ok ? [op.descriptors] : []));
    if (priced.length === 0) return NOTHING_TO_CHARGE;
    return requestDescriptors(unitDescriptors(priced), nodeHeaders(node));
  }

  function denial(req: object, denied: DeniedResponse): GraphqlDenial | undefined {
    const entry = entryOf(req);
    if (entry === undefined) return undefined;
    const error = deniedError(denied).toJSON();
    const throttleStatus = settings.extensions ? settings.statuses.of(denied.decision) : undefined;
    const results = entry.ops.map((op) => {
      if (!op.ok) return { errors: op.errors.map((one) => one.toJSON()) };
      if (!settings.extensions) return { errors: [error] };
      return { errors: [error], extensions: { cost: queryCost(op.estimate.cost, null, throttleStatus) } };
    });
    return {
      status: deniedStatus(denied, settings.throttledStatus),
      headers: denied.headers,
      body: entry.batch ? results : results[0],
    };
  }

  const hooks: GraphqlHooks = { descriptors, denial };
  cores.set(hooks, {
    settings,
    entryOf,
    unitOf(entry) {
      // Kept on the entry, not in a WeakMap keyed by it: an entry lives one request, and each such key costs
      // the garbage collector an ephemeron.
      entry.unit ??= new Unit(settings, entry.ops, async () => admittedBy(info(entry.req)));
      return entry.unit;
    },
    unpriced: new Notice(
      settings.logger,
      'SLUICE_GRAPHQL_UNPRICED: an operation reached the server without the adapter having priced it ' +
        '(is the adapter given `descriptors: hooks.descriptors`, or did its `skip` skip it?); it ran unlimited',
    ),
  });
  return hooks;
}

/** A Node request carrying its entry. */
type Carrier = { [entries: symbol]: HooksEntry | undefined };

/** The adapter's decision as a unit's admission: it admitted the request (a denial never reaches the server). */
function admittedBy(info: RateLimitInfo | undefined): Admission {
  const settle = info?.settle;
  return {
    allowed: true,
    decision: info?.decision,
    headers: {},
    settle: settle === undefined ? async () => undefined : (actual) => settle(actual),
  };
}

/** `req.rateLimit` (Express, Fastify), else `ctx.state.rateLimit` (Koa). */
function defaultInfo(req: object): RateLimitInfo | undefined {
  const own = (req as { rateLimit?: RateLimitInfo }).rateLimit;
  return own ?? (req as { state?: { rateLimit?: RateLimitInfo } }).state?.rateLimit;
}
