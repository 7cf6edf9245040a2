import { clientAddress, normalizeIp } from '../net/ip.js';
import type { Descriptors } from '../rules/contract.js';
import { hashText, IDEMPOTENCY_DESCRIPTOR, idempotencyDescriptor } from '../store/tags.js';
import type { RequestFacts } from './facts.js';
import { normalizePath } from './route.js';
import { ANONYMOUS_IP } from './used.js';

/** Still importable from here, where adapters and http/index.ts have always found it. */
export type { RequestFacts } from './facts.js';

/** How descriptors are built; every field has a default in the adapter options. */
export interface DescriptorSettings {
  readonly ipv6Subnet: number;
  readonly caseSensitiveRoutes: boolean;
  readonly apiKeyHeader: string;
  /** Longer values are replaced by a hash, so huge headers cost a bounded amount. */
  readonly maxValueLength: number;
  /** Header (lower case) carrying a retry's number, for the `retry` descriptors. Default `retry-attempt`. */
  readonly retryHeader?: string;
  /** Descriptors read from the client address (`asn`, `country`: @sluice/geoip), built only when a rule reads one. */
  readonly addressDescriptors?: AddressDescriptors;
}

/**
 * Descriptors an outside source gives for a client address (a GeoIP database). Core keeps no such
 * dependency: the source is plugged in through the `addressDescriptors` option.
 */
export interface AddressDescriptors {
  /** The names it gives; a request whose rules read none of them is not looked up. */
  readonly names: readonly string[];
  /** The descriptors of one whole client address; must not throw (a miss is a value the source documents). */
  describe(address: string): Readonly<Record<string, string>>;
}

/** The retry header the `retry` and `retry_attempt` descriptors are read from by default. */
export const DEFAULT_RETRY_HEADER = 'retry-attempt';

/** Default bound on a descriptor value's length before it is hashed. */
export const MAX_DESCRIPTOR_LENGTH = 256;

/** Descriptors built only for rules that read them (see used.ts): no other request pays for them. */
const ON_DEMAND = ['client_ip', 'retry', 'retry_attempt', IDEMPOTENCY_DESCRIPTOR] as const;

/**
 * The built-in descriptors of a request: `ip`, `method`, `route`, `api_key` (from `apiKey` when given,
 * else the API key header), and when `used` names them `client_ip`, `retry`, `retry_attempt` and
 * `idempotency_key`; merged with the app's own descriptors (which win), then `auth` (`api_key` or
 * `anonymous`) unless the app set it. With `onlyUsed`, a built-in no rule reads is not built at all (nobody
 * else looks at them: no decision observer). Values are bounded; nothing here throws on input.
 */
export function buildDescriptors(
  facts: RequestFacts,
  settings: DescriptorSettings,
  extra?: { readonly apiKey?: unknown; readonly descriptors?: unknown },
  used?: ReadonlySet<string>,
  onlyUsed = false,
): Descriptors {
  const max = settings.maxValueLength;
  const result: Record<string, string> = {};
  const wanted = used === undefined ? undefined : wantedOf(used);
  const all = !onlyUsed || wanted === undefined;
  const ip = all || wanted.ip ? normalizeIp(facts.ip, settings.ipv6Subnet) : undefined;
  // The built-ins by name, not through `put`: a store of a fixed name stays fast, one of any name does not.
  if (ip !== undefined) result.ip = bounded(ip, max);
  if (all || wanted.method) result.method = bounded(facts.method.toUpperCase(), max);
  if (all || wanted.route) {
    const caseSensitive = facts.caseSensitive ?? settings.caseSensitiveRoutes;
    result.route = bounded(facts.route ?? normalizePath(facts.url, { caseSensitive }), max);
  }
  const keyed = all || wanted.keyed;
  if (keyed) {
    const apiKey = extra && 'apiKey' in extra ? toValue(extra.apiKey) : headerApiKey(facts, settings);
    if (apiKey !== undefined) result.api_key = bounded(apiKey, max);
  }
  if (wanted?.onDemand === true) putOnDemand(result, facts, settings, ip, used!);
  const source = settings.addressDescriptors;
  if (source !== undefined && (used === undefined || source.names.some((name) => used.has(name))))
    putAddressDescriptors(result, source, facts.ip, max);
  const own = extra?.descriptors;
  if (typeof own === 'object' && own !== null) mergeOwn(result, own as Record<string, unknown>, max);
  if (keyed) result.auth ??= result.api_key === undefined ? 'anonymous' : 'api_key';
  // Read by rules of anonymous requests alone: a request with an API key never reads its address.
  if (!all && !wanted.ip && wanted.anonymousIp && result.auth === 'anonymous' && result.ip === undefined) {
    const address = normalizeIp(facts.ip, settings.ipv6Subnet);
    if (address !== undefined) result.ip = bounded(address, max);
  }
  return result;
}

/** Which built-in descriptors a set of names read asks for. */
interface Wanted {
  readonly ip: boolean;
  /** `ip` for anonymous requests only (used.ts's ANONYMOUS_IP). */
  readonly anonymousIp: boolean;
  readonly method: boolean;
  readonly route: boolean;
  /** `api_key`, and `auth` from it. */
  readonly keyed: boolean;
  /** One of ON_DEMAND at least. */
  readonly onDemand: boolean;
}

/** Worked out once per set of names (used.ts makes one per table): a request reads booleans, not sets. */
const wantedBySet = new WeakMap<ReadonlySet<string>, Wanted>();

/** The set asked for last and its answer: a table's requests ask with the same set, one after another. */
let lastUsed: ReadonlySet<string> | undefined;
let lastWanted: Wanted | undefined;

function wantedOf(used: ReadonlySet<string>): Wanted {
  if (used === lastUsed) return lastWanted!;
  lastUsed = used;
  lastWanted = wantedIn(used);
  return lastWanted;
}

function wantedIn(used: ReadonlySet<string>): Wanted {
  let wanted = wantedBySet.get(used);
  if (wanted === undefined) {
    wanted = {
      ip: used.has('ip') || used.has('client_ip'),
      anonymousIp: used.has(ANONYMOUS_IP),
      method: used.has('method'),
      route: used.has('route'),
      keyed: used.has('api_key') || used.has('auth'),
      onDemand: ON_DEMAND.some((name) => used.has(name)),
    };
    wantedBySet.set(used, wanted);
  }
  return wanted;
}

/** `client_ip`, `retry`, `retry_attempt` and `idempotency_key`, those of them `used` names. */
function putOnDemand(
  result: Record<string, string>,
  facts: RequestFacts,
  settings: DescriptorSettings,
  ip: string | undefined,
  used: ReadonlySet<string>,
): void {
  if (used.has(IDEMPOTENCY_DESCRIPTOR))
    put(
      result,
      IDEMPOTENCY_DESCRIPTOR,
      idempotencyDescriptor(facts.header('idempotency-key')),
      settings.maxValueLength,
    );
  // An IPv4 client's `ip` is its whole address already; an IPv6 one's is its subnet.
  if (used.has('client_ip'))
    put(result, 'client_ip', ip?.includes(':') ? clientAddress(facts.ip) : ip, settings.maxValueLength);
  if (!used.has('retry') && !used.has('retry_attempt')) return;
  const attempt = retryAttempt(facts.header(settings.retryHeader ?? DEFAULT_RETRY_HEADER));
  if (used.has('retry')) result.retry = attempt === 0 ? 'false' : 'true';
  if (used.has('retry_attempt') && attempt !== undefined && attempt > 0)
    result.retry_attempt = String(attempt);
}

/** The outside source's descriptors of the whole client address (its contract: it reports its own faults). */
function putAddressDescriptors(
  result: Record<string, string>,
  source: AddressDescriptors,
  rawIp: string | undefined,
  max: number,
): void {
  const address = clientAddress(rawIp);
  if (address === undefined) return;
  const found = source.describe(address);
  for (const name of source.names) put(result, name, found[name], max);
}

/** Most digits a retry number is read with; a longer one is a retry of unknown number. */
const MAX_ATTEMPT_DIGITS = 6;

/**
 * The retry number a request's retry header gives: 0 when absent, blank or `0` (a first attempt); the
 * number for a whole number; undefined for anything else, which still says the request is a retry.
 */
export function retryAttempt(header: string | readonly string[] | undefined): number | undefined {
  const text = (typeof header === 'string' ? header : header?.[0])?.trim() ?? '';
  if (text === '') return 0;
  if (text.length > MAX_ATTEMPT_DIGITS || !/^\d+$/.test(text)) return undefined;
  return Number(text);
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
  if (value !== undefined) result[name] = bounded(value, max);
}

/** A value as a descriptor holds it: replaced by its hash when longer than `max`. */
function bounded(value: string, max: number): string {
  return value.length > max ? `#${hashText(value)}` : value;
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
