import type { HeaderValues } from '@sluice/core/http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { GraphQLError } from 'graphql';
import type { MercuriusContext } from 'mercurius';
import type { Gate, Ticket } from './budget.js';
import type { GraphqlRequest } from './cost/index.js';
import { type CostBudgetOptions, CostGate } from './gate.js';
import { withCost } from './responses.js';

/*
 * Mercurius 16 on Fastify. Its `preExecution` hook runs once Mercurius has parsed and validated an operation
 * and checked its variables, before any resolver: the operation is priced and decided there, and a refused or
 * denied one is answered by the error thrown (its status and, for a denial, the RateLimit fields and
 * Retry-After). `onResolution` settles to the actual cost and adds `extensions.cost`. A batch's operations
 * share their Fastify request: that is how a whole batch is found and decided as one.
 */

/** What the standalone `descriptors` hook is given: Mercurius's context (`context.reply.request` is Fastify's). */
export type MercuriusCostContext = MercuriusContext;

/**
 * Options: standalone `{estimator, limiter, maxCost?, batch?, descriptors?, ...}`, or inside @sluice/fastify
 * `{hooks}` (the adapter's request is the context's `reply.request`).
 */
export type MercuriusCostOptions = CostBudgetOptions<MercuriusCostContext>;

/** An error Mercurius answers with its `statusCode`, its `extensions`, or its `errors` in its place. */
class Answer extends Error {
  constructor(
    message: string,
    readonly statusCode: number,
    readonly extensions?: Readonly<Record<string, unknown>>,
    readonly errors?: readonly GraphQLError[],
  ) {
    super(message);
  }
}

/**
 * Adds the cost budget to Mercurius's hooks: `await app.register(mercurius, {...})`, then
 * `mercuriusCostBudget(app, options)` before the app is ready.
 */
export function mercuriusCostBudget(app: FastifyInstance, options: MercuriusCostOptions): void {
  const gate = new CostGate<MercuriusCostContext>(
    'mercuriusCostBudget',
    options,
    (ctx) => ctx.reply?.request,
  );
  // Each operation's ticket rides on its Mercurius context (which Mercurius itself fills per request) under a
  // symbol of this plugin: a WeakMap keyed by a short-lived object costs the garbage collector an ephemeron
  // per request, more than the rest of the hook.
  const tickets = Symbol('sluice.ticket');
  app.graphql.addHook('preExecution', async (_schema, _document, context, variables) => {
    const request = context.reply.request;
    const body = request.body;
    const index = context.operationId ?? 0;
    const operationName = nameOf(entryOf(request, index));
    const priced = gate.price({ query: context.__currentQuery, operationName, variables });
    const passed = await gate.gate(priced, {
      key: request,
      index,
      ctx: context,
      header: (name) => headerOf(request, name),
      batch: Array.isArray(body) ? () => body.map((_op, at) => paramsOf(request, at)) : undefined,
    });
    if (passed === undefined) return;
    setHeaders(context, passed.kind === 'refused' ? {} : passed.headers);
    if (passed.kind === 'admitted') (context as Carrier)[tickets] = passed.ticket;
    else throw answerOf(passed);
  });
  app.graphql.addHook('onResolution', async (execution, context) => {
    const ticket = (context as Carrier)[tickets];
    if (ticket === undefined) return;
    const cost = await ticket.finish(execution.data);
    if (cost !== undefined) execution.extensions = withCost(execution.extensions, cost);
  });
}

/** A context carrying its operation's ticket. */
type Carrier = MercuriusCostContext & { [key: symbol]: Ticket | undefined };

function answerOf(gate: Exclude<Gate, { kind: 'admitted' }>): Answer {
  if (gate.kind === 'refused') return new Answer('Operation refused', 400, undefined, gate.errors);
  // Mercurius writes no top-level extensions on an error's response: `cost` goes into the error's.
  const extensions =
    gate.cost === undefined ? gate.error.extensions : withCost(gate.error.extensions, gate.cost);
  return new Answer(gate.error.message, gate.status, extensions);
}

function setHeaders(context: MercuriusCostContext, headers: HeaderValues): void {
  for (const name in headers) context.reply.header(name, headers[name]);
}

function headerOf(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The operation's parameters as the request carries them (a batch's by its place). */
function entryOf(request: FastifyRequest, index: number): Readonly<Record<string, unknown>> {
  const body: unknown = request.body;
  const entry = Array.isArray(body) ? body[index] : (body ?? request.query);
  return (entry ?? {}) as Record<string, unknown>;
}

function nameOf(entry: Readonly<Record<string, unknown>>): string | null {
  return typeof entry.operationName === 'string' ? entry.operationName : null;
}

/** The operation's name and query text as the request carries them (a batch's by its place). */
function paramsOf(request: FastifyRequest, index: number): GraphqlRequest {
  const entry = entryOf(request, index);
  const { query, variables } = entry;
  return {
    query: typeof query === 'string' ? query : undefined,
    operationName: nameOf(entry),
    variables:
      typeof variables === 'object' && variables !== null ? (variables as GraphqlRequest['variables']) : null,
  };
}
