import { GraphQLError } from 'graphql';
import type { GraphqlRequest } from './cost/index.js';
import type { HeaderReader } from './descriptors.js';

/*
 * What the adapter hooks read of a framework's request, knowing no framework: the Node request behind it
 * (Fastify's `request.raw`, Koa's `ctx.req`, Express's request itself), its parsed body (Koa's
 * `ctx.request.body`, else `body`) and, for a GET, the GraphQL parameters of its URL.
 */

/** An object's property, when the object has it. */
function field(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[name] : undefined;
}

const isObject = (value: unknown): value is object => typeof value === 'object' && value !== null;

/** The Node request behind a framework's request (or context): the key both sides of the hooks share. */
export function nodeRequestOf(req: object): object {
  const raw = field(req, 'raw');
  if (isObject(raw) && isObject(field(raw, 'headers'))) return raw;
  const inner = field(req, 'req');
  if (isObject(inner) && isObject(field(inner, 'headers'))) return inner;
  return req;
}

/** Reads the Node request's headers (lower-case names; a repeated header's values joined). */
export function nodeHeaders(node: object): HeaderReader {
  const headers = field(node, 'headers');
  return (name) => {
    const value = field(headers, name);
    if (typeof value === 'string') return value;
    return Array.isArray(value) ? value.join(', ') : undefined;
  };
}

/** One operation's parameters, or the error that makes them unreadable. */
export type OperationInput = GraphqlRequest | GraphQLError;

/**
 * The operations of a request: its parsed body's (an array is a batch), else a GET's URL parameters;
 * undefined when it carries none (no body parsed yet, or not a GraphQL request).
 */
export function operationsOf(
  req: object,
  node: object,
): { readonly operations: readonly OperationInput[]; readonly batch: boolean } | undefined {
  const koa = field(req, 'request');
  const body = isObject(koa) && 'body' in koa ? field(koa, 'body') : field(req, 'body');
  if (Array.isArray(body)) return { operations: body.map(bodyOperation), batch: true };
  if (isObject(body) && 'query' in body) return { operations: [bodyOperation(body)], batch: false };
  const url = field(node, 'url');
  if (body !== undefined || typeof url !== 'string' || !url.includes('?')) return undefined;
  const params = new URLSearchParams(url.slice(url.indexOf('?') + 1));
  const query = params.get('query');
  if (query === null) return undefined;
  const variables = params.get('variables');
  const parsed = variables === null || variables === '' ? null : parseVariables(variables);
  if (parsed instanceof GraphQLError) return { operations: [parsed], batch: false };
  return {
    operations: [{ query, operationName: params.get('operationName'), variables: parsed }],
    batch: false,
  };
}

function bodyOperation(entry: unknown): OperationInput {
  const query = field(entry, 'query');
  const operationName = field(entry, 'operationName');
  const variables = field(entry, 'variables');
  if (typeof query !== 'string') return badRequest('an operation must carry its query text');
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string')
    return badRequest('operationName must be a string');
  if (variables !== undefined && variables !== null && (!isObject(variables) || Array.isArray(variables)))
    return badRequest('variables must be an object');
  return {
    query,
    operationName: operationName ?? null,
    variables: (variables ?? null) as GraphqlRequest['variables'],
  };
}

function parseVariables(text: string): GraphqlRequest['variables'] | GraphQLError {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) && !Array.isArray(value)
      ? (value as GraphqlRequest['variables'])
      : badRequest('variables must be a JSON object');
  } catch {
    return badRequest('variables are not valid JSON');
  }
}

function badRequest(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'BAD_REQUEST' } });
}
