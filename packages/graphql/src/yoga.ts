import type { HeaderValues } from '@sluice/core/http';
import type { ExecutionResult } from 'graphql';
import type { GraphQLParams, Plugin } from 'graphql-yoga';
import type { Gate, Ticket } from './budget.js';
import { withExtensions } from './cost/index.js';
import { type CostBudgetOptions, CostGate } from './gate.js';
import { withCost } from './responses.js';

/*
 * GraphQL Yoga 5 (an envelop plugin). `onRequestParseDone` sees a batch whole; `onParams` prices and decides
 * each operation before Yoga parses, validates or executes it (a refused or denied one gets its result set
 * there: nothing runs); `onExecutionResult` settles to the actual cost and adds `extensions.cost`; `onResponse`
 * writes the RateLimit fields of a standalone decision.
 */

/** What the standalone `descriptors` hook is given: the fetch Request and the server context (`{req, res}` on Node). */
export interface YogaCostContext {
  readonly request: Request;
  readonly serverContext: Readonly<Record<string, unknown>>;
}

/**
 * Options: standalone `{estimator, limiter, maxCost?, batch?, descriptors?, ...}`, or inside an adapter
 * `{hooks}` (the adapter's request is found in the server context: Express's `req`, Koa's context itself).
 */
export type YogaCostOptions = CostBudgetOptions<YogaCostContext>;

type Result = ExecutionResult<unknown, Record<string, unknown>>;

/** The Yoga plugin: `createYoga({schema, plugins: [useCostBudget(options)]})`. */
export function useCostBudget(options: YogaCostOptions): Plugin {
  const gate = new CostGate<YogaCostContext>('useCostBudget', options, (ctx) => ctx.serverContext);
  const batches = new WeakMap<Request, readonly GraphQLParams[]>();
  // An operation's ticket rides on its context, the RateLimit fields on their request, each under a symbol of
  // this plugin: a WeakMap keyed by an object that lives one request costs the garbage collector an ephemeron
  // per request.
  const tickets = Symbol('sluice.ticket');
  const fields = Symbol('sluice.fields');
  return {
    onRequestParse({ request }) {
      return {
        onRequestParseDone({ requestParserResult }) {
          if (Array.isArray(requestParserResult)) batches.set(request, requestParserResult);
        },
      };
    },
    async onParams({ params, request, setResult, context }) {
      const batch = batches.get(request);
      const ctx: YogaCostContext = { request, serverContext: context as Record<string, unknown> };
      const priced = gate.price(asRequest(params));
      const passed = await gate.gate(priced, {
        key: request,
        index: batch === undefined ? 0 : Math.max(0, batch.indexOf(params)),
        ctx,
        header: (name) => request.headers.get(name) ?? undefined,
        batch: batch === undefined ? undefined : () => batch.map(asRequest),
      });
      if (passed === undefined) return;
      if (passed.kind === 'admitted') {
        carrying<Ticket>(context)[tickets] = passed.ticket;
        const byRequest = carrying<HeaderValues>(request);
        const known = byRequest[fields];
        byRequest[fields] = known === undefined ? passed.headers : Object.assign({}, known, passed.headers);
      } else setResult(refusedResult(passed));
    },
    async onExecutionResult({ result, setResult, context }) {
      const ticket = carrying<Ticket>(context)[tickets];
      if (ticket === undefined || result === undefined || Symbol.asyncIterator in result) return;
      const cost = await ticket.finish(result.data);
      if (cost === undefined) return;
      // A copy of the result with Object.assign, not a spread (see withCost).
      const costed: Result = Object.assign({}, result);
      costed.extensions = withCost(result.extensions, cost);
      setResult(costed);
    },
    onResponse({ request, response }) {
      const headers = carrying<HeaderValues>(request)[fields];
      if (headers !== undefined)
        for (const name in headers) response.headers.set(name, headers[name] as string);
    },
  };
}

/** An object seen as carrying values of this plugin under its symbols. */
const carrying = <T>(value: object) => value as { [key: symbol]: T | undefined };

/** The result of an operation refused or denied before it ran; Yoga takes the status from `extensions.http`. */
function refusedResult(gate: Exclude<Gate, { kind: 'admitted' }>): Result {
  if (gate.kind === 'refused')
    return { errors: gate.errors.map((error) => withExtensions(error, { http: { status: 400 } })) };
  const error = withExtensions(gate.error, { http: { status: gate.status, headers: gate.headers } });
  return gate.cost === undefined ? { errors: [error] } : { errors: [error], extensions: { cost: gate.cost } };
}

function asRequest(params: GraphQLParams) {
  return {
    query: params.query,
    operationName: params.operationName ?? null,
    variables: (params.variables ?? null) as Readonly<Record<string, unknown>> | null,
  };
}
