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
  const tickets = new WeakMap<object, Ticket>();
  const fields = new WeakMap<Request, HeaderValues>();
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
        tickets.set(context, passed.ticket);
        const known = fields.get(request);
        fields.set(request, known === undefined ? passed.headers : Object.assign({}, known, passed.headers));
      } else setResult(refusedResult(passed));
    },
    async onExecutionResult({ result, setResult, context }) {
      const ticket = tickets.get(context);
      if (ticket === undefined || result === undefined || Symbol.asyncIterator in result) return;
      const cost = await ticket.finish(result.data);
      if (cost === undefined) return;
      // A copy of the result with Object.assign, not a spread (see withCost).
      const costed: Result = Object.assign({}, result);
      costed.extensions = withCost(result.extensions, cost);
      setResult(costed);
    },
    onResponse({ request, response }) {
      const headers = fields.get(request);
      if (headers !== undefined)
        for (const name in headers) response.headers.set(name, headers[name] as string);
    },
  };
}

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
