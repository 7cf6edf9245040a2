import { type Target, tokensPaced } from './attempts.js';
import { type GraphqlAnswer, type GraphqlCosts, readGraphqlAnswer } from './graphqlCost.js';
import type { ResolvedClientOptions } from './options.js';

/** A GraphQL call as the client paces it. */
export interface GraphqlCall {
  /** The URL's path: each endpoint of an origin has its own budget. */
  readonly endpoint: string;
  /** The operation's name and query text (or persisted query id; a batch's, joined): its last cost is the guess. */
  readonly key: string | undefined;
  /** The cost given with the call (`cost`), which comes before any guess. */
  readonly cost: number | undefined;
}

/** A GraphQL attempt's response, and what its body said of the cost (undefined: no JSON GraphQL result). */
export interface GraphqlSent {
  readonly response: Response;
  readonly answer: GraphqlAnswer | undefined;
}

/**
 * The GraphQL call a request is, or undefined: with `graphql` on, a GET with a `query` (or persisted query)
 * in its URL, or a request whose body is a JSON string of an operation or a batch of them; any request given a
 * `cost`. A `cost` that is not a number >= 0 is a bug in the caller's code: a TypeError.
 */
export function graphqlCall(
  enabled: boolean,
  target: Pick<Target, 'url' | 'method'>,
  body: RequestInit['body'] | undefined,
  cost: number | undefined,
): GraphqlCall | undefined {
  if (cost !== undefined && !(typeof cost === 'number' && Number.isFinite(cost) && cost >= 0))
    throw new TypeError(`@sluice/client: cost must be a number >= 0, got ${String(cost)}`);
  if (!enabled && cost === undefined) return undefined;
  const key = target.method === 'GET' ? keyOfParams(target.url.searchParams) : keyOfBody(body);
  if (key === undefined && cost === undefined) return undefined;
  return { endpoint: target.url.pathname, key, cost };
}

/**
 * Sends one attempt of a GraphQL call (`send`) once the endpoint's budget holds its cost: the cost given, else
 * what the same query cost last time. A query whose cost is unknown goes alone, and the calls of the same text
 * wait for its answer. The answer's body is read from a clone before the call resolves (the caller's copy is
 * left unread), and teaches the budget and the query's cost.
 */
export async function sendGraphql(
  settings: ResolvedClientOptions,
  costs: GraphqlCosts,
  target: Target,
  { call, attempt }: { readonly call: GraphqlCall; readonly attempt: number },
  send: () => Promise<Response>,
): Promise<GraphqlSent> {
  const endpoint = costs.endpoint(call.endpoint);
  const query = call.key === undefined ? undefined : endpoint.query(call.key);
  const probe = settings.pacing && call.cost === undefined && query !== undefined && query.cost === undefined;
  const first = probe && (await query.first.turn(target.signal)) ? query : undefined;
  let seq = 0;
  let answered = false;
  try {
    if (settings.pacing) {
      const guess = call.cost ?? query?.cost ?? 0;
      seq = await tokensPaced(settings, endpoint.budget, target, attempt, guess, 'graphql');
    }
    const response = await send();
    const answer = await readAnswer(response);
    endpoint.observe(seq, query, answer, settings.now());
    answered = true;
    return { response, answer };
  } finally {
    // A call that got no answer is no longer in flight, and hands its query's first turn on.
    if (!answered && seq > 0) endpoint.observe(seq, undefined, undefined, settings.now());
    first?.first.settle(answered);
  }
}

/** The body of a JSON answer, read from a clone; undefined when it is no JSON or no GraphQL result. */
async function readAnswer(response: Response): Promise<GraphqlAnswer | undefined> {
  if (!isJson(response.headers.get('content-type'))) return undefined;
  try {
    return readGraphqlAnswer(JSON.parse(await response.clone().text()));
  } catch {
    // Unreadable (cut off, aborted, not JSON): the caller meets the same reading its own copy.
    return undefined;
  }
}

/** `application/json`, `application/graphql-response+json`, with or without parameters. */
function isJson(contentType: string | null): boolean {
  const type = contentType?.split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || type.endsWith('+json');
}

/** The key of a GET's operation: `query`, `operationName`, or a persisted query's id in `extensions`. */
function keyOfParams(params: URLSearchParams): string | undefined {
  let extensions: unknown;
  try {
    extensions = JSON.parse(params.get('extensions') ?? 'null');
  } catch {
    extensions = undefined;
  }
  return keyOf({
    query: params.get('query') ?? undefined,
    operationName: params.get('operationName') ?? undefined,
    documentId: params.get('documentId') ?? undefined,
    extensions,
  });
}

/** The key of a JSON body's operation, or of a batch's operations; undefined for any other body. */
function keyOfBody(body: RequestInit['body'] | undefined): string | undefined {
  if (typeof body !== 'string' || !/^\s*[[{]/.test(body)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed)) return keyOf(parsed);
  const keys = parsed.map(keyOf);
  return keys.length > 0 && keys.every((key) => key !== undefined) ? keys.join('\n\n') : undefined;
}

/** `operationName` and the query text, or the persisted query's id: what makes one call cost as another. */
function keyOf(operation: unknown): string | undefined {
  if (typeof operation !== 'object' || operation === null) return undefined;
  const { query, operationName, documentId, id, extensions } = operation as Record<string, unknown>;
  const name = typeof operationName === 'string' ? operationName : '';
  if (typeof query === 'string' && query !== '') return `${name}\n${query}`;
  const persisted = (extensions as { persistedQuery?: { sha256Hash?: unknown } } | null | undefined)
    ?.persistedQuery?.sha256Hash;
  const stored = [documentId, id, persisted].find((value) => typeof value === 'string' && value !== '');
  return stored === undefined ? undefined : `${name}\n#${String(stored)}`;
}
