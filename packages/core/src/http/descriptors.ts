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
  const max = settings.maxValueLength;
  const caseSensitive = facts.caseSensitive ?? settings.caseSensitiveRoutes;
  const apiKey = extra && 'apiKey' in extra ? toValue(extra.apiKey) : headerApiKey(facts, settings);
  const result: Record<string, string> = {};
  put(result, 'ip', normalizeIp(facts.ip, settings.ipv6Subnet), max);
  put(result, 'method', facts.method.toUpperCase(), max);
  put(result, 'route', facts.route ?? normalizePath(facts.url, { caseSensitive }), max);
  put(result, 'api_key', apiKey, max);
  const own = extra?.descriptors;
  if (typeof own === 'object' && own !== null) mergeOwn(result, own as Record<string, unknown>, max);
  result.auth ??= result.api_key === undefined ? 'anonymous' : 'api_key';
  return result;
}

/**
 * The app's descriptors win: a value (numbers and booleans as text) replaces a built-in one, undefined or null
 * unsets it, anything else (an object, an empty string) is ignored.
 */
function mergeOwn(result: Record<string, string>, own: Record<string, unknown>, max: number): void {
  for (const name in own) {
    if (!Object.hasOwn(own, name)) continue;
    const item = own[name];
    // Rare (an app unsetting a built-in): `delete` is the only way to leave no property behind.
    if (item === undefined || item === null) delete result[name];
    else put(result, name, toValue(item), max);
  }
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

/** The API key header's (first) value, trimmed; undefined when absent or blank. */
export function headerApiKey(facts: RequestFacts, settings: DescriptorSettings): string | undefined {
  const header = facts.header(settings.apiKeyHeader);
  const value = typeof header === 'string' ? header : header?.[0];
  const trimmed = value?.trim();
  return trimmed === '' ? undefined : trimmed;
}
