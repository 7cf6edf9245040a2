/**
 * The public limits added to an OpenAPI 3 document: each operation a limit's routes and methods match gets a 429
 * response with the rate-limit headers (a 503 too when a limit of it fails closed), the fields on its success
 * responses, and an `x-ratelimit` list of its limits. The headers and examples come from the responses the
 * limiter really sends (examples.ts).
 */

import type { PublicLimit, Scope } from './limits.js';
import { headerOf, type LimitsPage } from './page.js';

type Json = Record<string, unknown>;

/** The operations of a path item, as OpenAPI names them. */
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** What was added where, and what could not be placed. */
export interface OpenApiResult {
  readonly document: Json;
  /** `METHOD /path` -> the limits added to it. */
  readonly operations: ReadonlyMap<string, readonly string[]>;
  /** Limits no operation matched (their routes name none of the document's paths). */
  readonly unmatched: readonly string[];
  /** Limits whose routes or methods come from a list: where they apply is not known here. */
  readonly listed: readonly string[];
  /** Operations that already had a 429 (or 503) response of their own, left as they were. */
  readonly kept: readonly string[];
}

/** A route or path template with its parameters as `{}`, lower case, no trailing slash: `/users/{}`. */
export function routeShape(path: string): string {
  const shaped = path
    .split('/')
    .map((part) => (/^(:\w+|\{[^}]+\})$/.test(part) ? '{}' : part.toLowerCase()))
    .join('/');
  return shaped.length > 1 ? shaped.replace(/\/+$/, '') : shaped;
}

/** Whether a scope holds a value (`shape` turns both sides into one form). */
function inScope(scope: Scope, value: string, shape: (text: string) => string): boolean | undefined {
  if (scope.list !== undefined) return undefined;
  if (scope.only !== undefined) return scope.only.some((v) => shape(v) === shape(value));
  return scope.except === undefined || !scope.except.some((v) => shape(v) === shape(value));
}

const upper = (text: string): string => text.toUpperCase();

/** The component names of what is added, by what it is. */
const COMPONENTS = { denied: 'RateLimited', unavailable: 'RateLimitUnavailable', body: 'RateLimitedBody' };

/** Header components: the rate-limit fields the example 429 carries, each with its example value. */
function headerComponents(page: LimitsPage, meanings: ReadonlyMap<string, string>): Json {
  const sample = page.samples.get(page.denied!.rule.name)!.denied;
  const headers: Json = {};
  for (const [name, value] of sample.headers) {
    const meaning = meanings.get(name);
    if (meaning === undefined) continue;
    const integer = /^\d+$/.test(value);
    headers[name] = {
      description: meaning.replaceAll('`', ''),
      schema: integer ? { type: 'integer', minimum: 0 } : { type: 'string' },
      example: integer ? Number(value) : value,
    };
  }
  return headers;
}

const ref = (kind: string, name: string): Json => ({ $ref: `#/components/${kind}/${name}` });

/** The object at `parent[key]`, made empty when there is none. */
function objectAt(parent: Json, key: string): Json {
  if (parent[key] === undefined) parent[key] = {};
  return parent[key] as Json;
}

/** The body of a 429 or 503, as the limiter sends it. */
const BODY_SCHEMA: Json = {
  type: 'object',
  required: ['error', 'rule', 'retryAfter'],
  properties: {
    error: { type: 'string', enum: ['rate_limited', 'rate_limit_unavailable'] },
    rule: { type: 'string', description: 'The limit that refused the request.' },
    retryAfter: { type: 'integer', minimum: 0, description: 'Seconds to wait, as in Retry-After.' },
    reason: { type: 'string', enum: ['ban'], description: 'Set when the key is blocked for a while.' },
    bannedUntil: { type: 'string', format: 'date-time', description: 'When a block ends.' },
  },
};

function refusal(description: string, headers: readonly string[], example: string): Json {
  return {
    description,
    headers: Object.fromEntries(headers.map((name) => [name, ref('headers', name)])),
    content: {
      'application/json': { schema: ref('schemas', COMPONENTS.body), example: JSON.parse(example) },
    },
  };
}

/** The components every matched operation points at, merged into the document's own. */
function addComponents(document: Json, page: LimitsPage): readonly string[] {
  const meanings = new Map(page.fields.map((field) => [field.name, field.meaning]));
  const headers = headerComponents(page, meanings);
  const names = Object.keys(headers);
  const samples = page.samples;
  const components = objectAt(document, 'components');
  Object.assign(objectAt(components, 'headers'), headers);
  Object.assign(objectAt(components, 'schemas'), { [COMPONENTS.body]: BODY_SCHEMA });
  Object.assign(objectAt(components, 'responses'), {
    [COMPONENTS.denied]: refusal(
      'Too Many Requests: a rate limit is used up. Retry after Retry-After seconds, with jitter.',
      names,
      samples.get(page.denied!.rule.name)!.denied.body,
    ),
    [COMPONENTS.unavailable]: refusal(
      'The rate limiter cannot count and this limit fails closed. Retry after Retry-After seconds, with jitter.',
      names,
      samples.get(page.unavailable!.rule.name)!.unavailable.body,
    ),
  });
  return names;
}

/** One limit as the `x-ratelimit` extension lists it. */
function extensionOf(page: LimitsPage, limit: PublicLimit): Json {
  const { rule } = limit;
  const policy = headerOf(page.samples.get(rule.name)!.allowed, 'RateLimit-Policy');
  return {
    name: rule.name,
    appliesTo: limit.who,
    limit: rule.params.limit,
    ...(limit.windowSeconds === undefined
      ? { period: limit.window }
      : { windowSeconds: limit.windowSeconds }),
    ...(rule.params.burst !== rule.params.limit ? { burst: rule.params.burst } : {}),
    counted: limit.per,
    key: [...rule.key],
    algorithm: rule.algorithm,
    ...(policy === undefined ? {} : { policy }),
    failsClosed: limit.failsClosed,
    ...(limit.notes.length === 0 ? {} : { notes: limit.notes }),
  };
}

/** Adds the fields every response within a limit carries to the operation's inline success responses. */
function addSuccessHeaders(responses: Json, fields: readonly string[]): void {
  for (const [status, response] of Object.entries(responses)) {
    if (!/^2/.test(status) || typeof response !== 'object' || response === null || '$ref' in response)
      continue;
    const headers = objectAt(response as Json, 'headers');
    for (const name of fields) headers[name] ??= ref('headers', name);
  }
}

/**
 * Adds the page's limits to a parsed OpenAPI 3 document (changed in place and returned). `basePath` is what the
 * routes the limiter sees start with before the document's paths (a server's `/v1`, say).
 */
export function addLimits(document: Json, page: LimitsPage, basePath = ''): OpenApiResult {
  const operations = new Map<string, string[]>();
  const kept: string[] = [];
  const listed = page.limits.filter((l) => l.routes.list !== undefined || l.methods.list !== undefined);
  const placeable = page.limits.filter((limit) => !listed.includes(limit));
  const names = page.denied === undefined ? [] : addComponents(document, page);
  // The fields a response within a limit carries (the RateLimit ones, not the refusal's).
  const allowed = page.denied === undefined ? [] : page.samples.get(page.denied.rule.name)!.allowed.headers;
  const fields = names.filter((name) => allowed.some(([field]) => field === name));
  for (const [path, item] of Object.entries((document.paths ?? {}) as Record<string, Json>)) {
    for (const method of METHODS) {
      const operation = item?.[method] as Json | undefined;
      if (operation === undefined) continue;
      const route = `${basePath.replace(/\/+$/, '')}${path}`;
      const limits = placeable.filter(
        (l) => inScope(l.routes, route, routeShape) && inScope(l.methods, method, upper),
      );
      if (limits.length === 0) continue;
      const label = `${method.toUpperCase()} ${path}`;
      operations.set(
        label,
        limits.map((l) => l.rule.name),
      );
      operation['x-ratelimit'] = limits.map((limit) => extensionOf(page, limit));
      const responses = objectAt(operation, 'responses');
      addSuccessHeaders(responses, fields);
      if (responses['429'] === undefined) responses['429'] = ref('responses', COMPONENTS.denied);
      else kept.push(`${label} 429`);
      if (!limits.some((l) => l.failsClosed)) continue;
      if (responses['503'] === undefined) responses['503'] = ref('responses', COMPONENTS.unavailable);
      else kept.push(`${label} 503`);
    }
  }
  const placed = new Set([...operations.values()].flat());
  return {
    document,
    operations,
    unmatched: placeable.filter((l) => !placed.has(l.rule.name)).map((l) => l.rule.name),
    listed: listed.map((l) => l.rule.name),
    kept,
  };
}
