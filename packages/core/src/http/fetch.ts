import { ConfigError } from '../base/errors.js';
import { type AddressBits, covers, parseAddress, parseRange } from '../net/address.js';
import type { ProxyTrust, RequestFacts } from './facts.js';

/**
 * Which proxies a fetch-style app (Hono, say) trusts to report the client in X-Forwarded-For, as Express's
 * 'trust proxy' reads it: `false` (default) none, `true` every hop, a number of hops in front of the app, or
 * the proxies' addresses and CIDR ranges.
 */
export type TrustProxy = boolean | number | readonly string[];

/** A {@link TrustProxy} setting checked once at start-up: the client address of each request. */
export interface ForwardedTrust {
  /** How far the setting trusts proxies, for the start-up notices. */
  readonly trust: ProxyTrust;
  /** The client: the socket's peer, or the X-Forwarded-For hop the setting trusts to name it. */
  clientAddress(peer: string | undefined, forwardedFor: string | null): string | undefined;
}

/** Checks a `trustProxy` setting; throws a ConfigError saying what is wrong with it. */
export function forwardedTrust(setting: TrustProxy | undefined): ForwardedTrust {
  if (setting === undefined || setting === false || setting === 0)
    return { trust: 'none', clientAddress: peerOnly };
  if (setting === true) return { trust: 'all', clientAddress: leftmostHop };
  if (typeof setting === 'number') {
    if (!Number.isSafeInteger(setting) || setting < 0)
      throw new ConfigError(`option "trustProxy": a hop count must be a whole number >= 0, not ${setting}`);
    return { trust: 'bounded', clientAddress: (peer, header) => hopAt(hops(peer, header), setting) };
  }
  if (!Array.isArray(setting))
    throw new ConfigError(
      'option "trustProxy": must be true, false, a hop count or a list of proxy addresses',
    );
  const ranges = setting.map(proxyRange);
  if (ranges.length === 0) return { trust: 'none', clientAddress: peerOnly };
  return { trust: 'bounded', clientAddress: (peer, header) => firstUntrusted(hops(peer, header), ranges) };
}

function proxyRange(text: unknown): AddressBits {
  const range = typeof text === 'string' ? parseRange(text.trim()) : `${String(text)} is not an address`;
  if (typeof range === 'string') throw new ConfigError(`option "trustProxy": ${range}`);
  return range;
}

const peerOnly = (peer: string | undefined): string | undefined => peer;

function leftmostHop(peer: string | undefined, header: string | null): string | undefined {
  const all = hops(peer, header);
  return all[all.length - 1];
}

/** The peer, then the X-Forwarded-For entries from right (nearest proxy's view) to left (the client's claim). */
function hops(peer: string | undefined, header: string | null): string[] {
  const list = peer === undefined ? [] : [peer];
  if (header === null) return list;
  const entries = header.split(',');
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]?.trim();
    if (entry) list.push(entry);
  }
  return list;
}

/** `trusted` hops each named the one before them: the hop after the last trusted one, or the farthest known. */
function hopAt(list: readonly string[], trusted: number): string | undefined {
  return list[Math.min(trusted, list.length - 1)];
}

/** The first hop that is not a trusted proxy: whatever it wrote to the left of itself may be made up. */
function firstUntrusted(list: readonly string[], ranges: readonly AddressBits[]): string | undefined {
  for (let i = 0; i < list.length - 1; i++) {
    const bits = parseAddress(list[i] ?? '');
    if (bits === undefined || !ranges.some((range) => covers(range, bits))) return list[i];
  }
  return list[list.length - 1];
}

/**
 * What the limiter reads off a Fetch `Request`: method, request target and headers through the `Headers` API;
 * the client address, proxy trust and route template come from the framework, which alone knows them.
 */
export class FetchFacts implements RequestFacts {
  readonly ip: string | undefined;
  readonly method: string;
  readonly url: string;
  readonly route: string | undefined;
  readonly proxyTrust: ProxyTrust;
  readonly #headers: Headers;

  constructor(request: Request, ip: string | undefined, proxyTrust: ProxyTrust, route?: string) {
    this.ip = ip;
    this.method = request.method;
    this.url = requestTarget(request.url);
    this.route = route;
    this.proxyTrust = proxyTrust;
    this.#headers = request.headers;
  }

  /** Repeated headers arrive joined by `, ` (the Fetch API has no other view of them). */
  header(name: string): string | undefined {
    return this.#headers.get(name) ?? undefined;
  }
}

/** `/path?query` of an absolute URL (a Request's url always is one), without parsing it whole. */
export function requestTarget(url: string): string {
  const scheme = url.indexOf('://');
  const start = url.indexOf('/', scheme === -1 ? 0 : scheme + 3);
  if (start === -1) return '/';
  const hash = url.indexOf('#', start);
  return hash === -1 ? url.slice(start) : url.slice(start, hash);
}
