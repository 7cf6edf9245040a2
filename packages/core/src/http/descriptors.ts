import { hashText } from '../keys.js';
import type { Descriptors } from '../types.js';
import { normalizeIp } from './ip.js';
import type { ProxyTrust } from './proxy.js';
import { normalizePath } from './route.js';

/** What an adapter reads off a request, framework-neutral. */
export interface RequestFacts {
  /** The framework's trusted client address (proxy headers only when the app trusts proxies). */
  readonly ip: string | undefined;
  readonly method: string;
  /** The raw request target (`req.url`), used when no route template is known. */
  readonly url: string;
  /** The route template (`/users/:id`) when the framework knows it. */
  readonly route?: string;
  /** Overrides the configured case sensitivity when the framework knows its router's (Express). */
  readonly caseSensitive?: boolean;
  /** How the framework trusts proxies, for start-up smells only; undefined when unknown. */
  readonly proxyTrust?: ProxyTrust;
  /** A request header by lower-case name. */
  header(name: string): string | readonly string[] | undefined;
}

/** How descriptors are built; every field has a default in the adapter options. */
export interface DescriptorSettings {
  readonly ipv6Subnet: number;
  readonly caseSensitiveRoutes: boolean;
  readonly apiKeyHeader: string;
  /** Longer values are replaced by a hash, so huge headers cost a bounded amount. */
  readonly maxValueLength: number;
}

/** Default bound on a descriptor value's length before it is hashed. */
export const MAX_DESCRIPTOR_LENGTH = 256;

/**
 * The built-in descriptors of a request: `ip`, `method`, `route`, `api_key` (from `apiKey` when given,
 * else the API key header), merged with the app's own descriptors (which win), then `auth`
 * (`api_key` or `anonymous`) unless the app set it. Values are bounded; nothing here throws on input.
 */
export function buildDescriptors(
  facts: RequestFacts,
  settings: DescriptorSettings,
  extra?: { readonly apiKey?: unknown; readonly descriptors?: unknown },
): Descriptors {
  const own = extra?.descriptors;
  const mine = typeof own === 'object' && own !== null ? (own as Record<string, unknown>) : undefined;
  const max = settings.maxValueLength;
  const result: Record<string, string> = {};
  if (!owns(mine, 'ip')) put(result, 'ip', normalizeIp(facts.ip, settings.ipv6Subnet), max);
  if (!owns(mine, 'method')) put(result, 'method', facts.method.toUpperCase(), max);
  if (!owns(mine, 'route')) {
    const caseSensitive = facts.caseSensitive ?? settings.caseSensitiveRoutes;
    put(result, 'route', facts.route ?? normalizePath(facts.url, { caseSensitive }), max);
  }
  if (!owns(mine, 'api_key')) {
    const apiKey =
      extra && 'apiKey' in extra ? toValue(extra.apiKey) : firstValue(facts.header(settings.apiKeyHeader));
    put(result, 'api_key', apiKey, max);
  }
  // The app's descriptors win; undefined or null unsets a built-in one.
  if (mine !== undefined)
    for (const name in mine) if (Object.hasOwn(mine, name)) put(result, name, toValue(mine[name]), max);
  if (!owns(mine, 'auth')) result.auth = result.api_key === undefined ? 'anonymous' : 'api_key';
  return result;
}

function owns(object: Record<string, unknown> | undefined, name: string): boolean {
  return object !== undefined && Object.hasOwn(object, name);
}

/** Sets a defined value, replaced by its hash when longer than `max`. */
function put(result: Record<string, string>, name: string, value: string | undefined, max: number): void {
  if (value !== undefined) result[name] = value.length > max ? `#${hashText(value)}` : value;
}

/** A descriptor value: strings (empty is none), numbers, booleans and bigints as text; anything else none. */
function toValue(value: unknown): string | undefined {
  if (typeof value === 'string') return value === '' ? undefined : value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  return undefined;
}

function firstValue(header: string | readonly string[] | undefined): string | undefined {
  const value = typeof header === 'string' ? header : header?.[0];
  const trimmed = value?.trim();
  return trimmed === '' ? undefined : trimmed;
}
