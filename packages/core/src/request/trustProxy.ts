import { ConfigError } from '../base/errors.js';
import { type AddressBits, covers, parseAddress, parseRange } from '../net/address.js';
import type { ProxyTrust } from './facts.js';

/**
 * Which proxies an app trusts to report the client in X-Forwarded-For, in every form the common 'trust proxy' setting
 * takes: `false` (default) none, `true` every hop, a number of hops in front of the app, the proxies'
 * addresses and CIDR ranges as a list or a comma-separated string (with proxy-addr's names `loopback`,
 * `linklocal` and `uniquelocal`), or a function `(address, hop) => boolean` (hop 0 is the socket's peer).
 */
export type TrustProxy =
  | boolean
  | number
  | string
  | readonly string[]
  | ((address: string, hop: number) => boolean);

/** A {@link TrustProxy} setting checked once at start-up: the client address of each request. */
export interface ForwardedTrust {
  /** How far the setting trusts proxies, for the start-up notices. */
  readonly trust: ProxyTrust;
  /** The client: the socket's peer, or the X-Forwarded-For hop the setting trusts to name it. */
  clientAddress(peer: string | undefined, forwardedFor: string | null): string | undefined;
}

/** proxy-addr's named ranges. */
const NAMED_RANGES: Readonly<Record<string, readonly string[]>> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

const NONE: ForwardedTrust = { trust: 'none', clientAddress: (peer) => peer };

/** Checks a `trustProxy` setting; throws a ConfigError saying what is wrong with it. */
export function forwardedTrust(setting: TrustProxy | undefined): ForwardedTrust {
  if (setting === undefined || setting === false || setting === 0) return NONE;
  if (setting === true) return { trust: 'all', clientAddress: leftmostHop };
  if (typeof setting === 'number') return hopCountTrust(setting);
  if (typeof setting === 'function') return predicateTrust(setting);
  if (typeof setting === 'string') return rangeTrust(setting.split(','));
  if (Array.isArray(setting)) return rangeTrust(setting);
  throw new ConfigError(
    'option "trustProxy": must be true, false, a hop count, proxy addresses (a list or a comma-separated string) or a function',
  );
}

function hopCountTrust(count: number): ForwardedTrust {
  if (!Number.isSafeInteger(count) || count < 0)
    throw new ConfigError(`option "trustProxy": a hop count must be a whole number >= 0, not ${count}`);
  return { trust: 'bounded', clientAddress: (peer, header) => hopAt(hops(peer, header), count) };
}

function predicateTrust(trusted: (address: string, hop: number) => boolean): ForwardedTrust {
  return { trust: 'bounded', clientAddress: (peer, header) => firstUntrusted(hops(peer, header), trusted) };
}

function rangeTrust(entries: readonly unknown[]): ForwardedTrust {
  const ranges = entries.flatMap(proxyRanges);
  if (ranges.length === 0) return NONE;
  return predicateTrust((address) => {
    const bits = parseAddress(address);
    return bits !== undefined && ranges.some((range) => covers(range, bits));
  });
}

/** One entry of an address list: an address, a CIDR range or one of proxy-addr's names. */
function proxyRanges(text: unknown): AddressBits[] {
  if (typeof text !== 'string')
    throw new ConfigError(`option "trustProxy": ${String(text)} is not an address`);
  const entry = text.trim();
  if (entry === '') return [];
  return (NAMED_RANGES[entry] ?? [entry]).map((one) => {
    const range = parseRange(one);
    if (typeof range === 'string') throw new ConfigError(`option "trustProxy": ${range}`);
    return range;
  });
}

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
function firstUntrusted(
  list: readonly string[],
  trusted: (address: string, hop: number) => boolean,
): string | undefined {
  for (let i = 0; i < list.length - 1; i++) {
    const hop = list[i] ?? '';
    if (!trusted(hop, i)) return hop;
  }
  return list[list.length - 1];
}
