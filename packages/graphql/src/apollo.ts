import {
  type ApolloServerPlugin,
  type BaseContext,
  type GraphQLRequest,
  type GraphQLRequestContext,
  type GraphQLRequestListener,
  HeaderMap,
} from '@apollo/server';
import type { HeaderValues } from '@sluice/core/http';
import { type FormattedExecutionResult, GraphQLError } from 'graphql';
import type { Gate, Ticket } from './budget.js';
import { withExtensions } from './cost/index.js';
import type { HeaderReader } from './descriptors.js';
import { type CostBudgetOptions, CostGate } from './gate.js';
import { type QueryCost, withCost } from './responses.js';

/*
 * Apollo Server 5. An operation is priced and decided in `didResolveOperation` (Apollo has parsed and validated
 * it; nothing has executed): refused or throttled, the thrown error answers it with its HTTP status and headers.
 * `willSendResponse` settles to the actual cost of the result and adds `extensions.cost`. The operations of a
 * batch share their response's HTTP head (each gets a copy of the context value): that is how a whole batch is
 * found and decided as one.
 */

/** The Apollo request context the standalone `descriptors` hook is given (read `request.http.headers`). */
export type ApolloCostContext<Ctx extends BaseContext = BaseContext> = GraphQLRequestContext<Ctx>;

/**
 * Options: standalone `{estimator, limiter, maxCost?, batch?, descriptors?, ...}`, or inside an adapter
 * `{hooks}` (the context value must then hold the framework's request as `req`: `context: async ({req}) =>
 * ({req})`, or say where it is with `request`).
 */
export type ApolloCostOptions<Ctx extends BaseContext = BaseContext> = CostBudgetOptions<
  ApolloCostContext<Ctx>
>;

/** The Apollo Server plugin: `new ApolloServer({schema, plugins: [apolloCostBudget(options)]})`. */
export function apolloCostBudget<Ctx extends BaseContext = BaseContext>(
  options: ApolloCostOptions<Ctx>,
): ApolloServerPlugin<Ctx> {
  const gate = new CostGate<ApolloCostContext<Ctx>>('apolloCostBudget', options, (rc) => {
    const req = (rc.contextValue as { req?: unknown }).req;
    return typeof req === 'object' && req !== null ? req : undefined;
  });
  /** The operations of each HTTP request, by its shared response head, in the order Apollo started them. */
  const batches = new WeakMap<object, GraphQLRequest[]>();
  return {
    async requestDidStart(started) {
      const key = started.response.http;
      if (!started.requestIsBatched) return listener(gate, { key, index: 0, batch: undefined });
      const all = batches.get(key) ?? [];
      batches.set(key, all);
      const index = all.push(started.request) - 1;
      return listener(gate, { key, index, batch: () => all.map(asRequest) });
    },
  };
}

/** One operation's listener: its gate at `didResolveOperation`, its settle at `willSendResponse`. */
function listener<Ctx extends BaseContext>(
  gate: CostGate<ApolloCostContext<Ctx>>,
  where: { key: object; index: number; batch: (() => ReturnType<typeof asRequest>[]) | undefined },
): GraphQLRequestListener<Ctx> {
  let ticket: Ticket | undefined;
  let cost: QueryCost | undefined;
  let headers: HeaderValues = {};
  return {
    async didResolveOperation(rc) {
      const priced = gate.price({
        query: rc.source,
        operationName: rc.request.operationName,
        variables: rc.request.variables,
      });
      const { key, index, batch } = where;
      const passed = await gate.gate(priced, { key, index, ctx: rc, header: headerReader(rc), batch });
      if (passed === undefined) return;
      if (passed.kind === 'admitted') {
        ticket = passed.ticket;
        headers = passed.headers;
        return;
      }
      if (passed.kind === 'denied') cost = passed.cost;
      throw refusal(passed);
    },
    async willSendResponse(rc) {
      // A HeaderMap: it lower-cases the names itself.
      for (const name in headers) rc.response.http.headers.set(name, headers[name] as string);
      const { body } = rc.response;
      if (body.kind !== 'single') return;
      if (ticket !== undefined) cost = await ticket.finish(body.singleResult.data);
      if (cost === undefined) return;
      // Apollo made singleResult with a spread (`{...result, errors}`): V8 gives such an object a map no
      // transition leads from, and adding `extensions` to it costs a new map (microseconds). A copy made with
      // Object.assign takes it as any object does; Apollo serializes body.singleResult after this hook.
      const result: FormattedExecutionResult = Object.assign({}, body.singleResult);
      result.extensions = withCost(body.singleResult.extensions, cost);
      body.singleResult = result;
    },
  };
}

/** The error Apollo answers a refused or denied operation with, carrying its HTTP status and headers. */
function refusal(gate: Exclude<Gate, { kind: 'admitted' }>): GraphQLError {
  if (gate.kind === 'denied') {
    const http = { status: gate.status, headers: new HeaderMap(Object.entries(gate.headers).map(lower)) };
    return withExtensions(gate.error, { http });
  }
  // Apollo answers one thrown error: the first says what is wrong (the estimator gives them in order).
  const [first] = gate.errors;
  return withExtensions(first ?? new GraphQLError('Operation refused'), { http: { status: 400 } });
}

const lower = ([name, value]: [string, string]): [string, string] => [name.toLowerCase(), value];

function headerReader<Ctx extends BaseContext>(rc: ApolloCostContext<Ctx>): HeaderReader {
  const headers = rc.request.http?.headers;
  return (name) => headers?.get(name);
}

function asRequest(request: GraphQLRequest) {
  return {
    query: request.query,
    operationName: request.operationName ?? null,
    variables: request.variables ?? null,
  };
}
