import { isIPv4, isIPv6 } from 'node:net';

/** Default IPv6 prefix length a client is keyed by: one /64 is what a single subscriber usually gets. */
export const DEFAULT_IPV6_SUBNET = 64;

/**
 * Turns a client address into the value of the `ip` descriptor.
 * - A port is dropped: `203.0.113.7:51234` and `[2001:db8::1]:443` (as some proxies write X-Forwarded-For)
 *   key as the address alone, so a client cannot get a fresh counter per source port.
 * - IPv4-mapped IPv6 (`::ffff:203.0.113.7`) folds to plain IPv4, so dual-stack sockets key alike; so does a
 *   NAT64 address (`64:ff9b::203.0.113.7`, RFC 6052), which is the IPv4 client behind the translator.
 * - Other IPv6 addresses are masked to `subnet` bits (default /64) and written as `prefix/len`, because
 *   one subscriber can hop freely inside its /64 and must not escape a per-IP limit by doing so.
 * - Anything that is not an IP address (a garbage forwarded header, say) is returned trimmed and
 *   lower-cased, so it still keys consistently; undefined or empty stays undefined.
 */
export function normalizeIp(address: string | undefined, subnet = DEFAULT_IPV6_SUBNET): string | undefined {
  // Requests on one keep-alive connection repeat its address: the last answer is kept (a pure function).
  if (address === lastAddress && subnet === lastSubnet) return lastIp;
  const ip = normalizedIp(address, subnet);
  lastAddress = address;
  lastSubnet = subnet;
  lastIp = ip;
  return ip;
}

let lastAddress: string | undefined;
let lastSubnet = DEFAULT_IPV6_SUBNET;
let lastIp: string | undefined;

function normalizedIp(address: string | undefined, subnet: number): string | undefined {
  if (address === undefined) return undefined;
  let text = address.trim();
  if (text === '') return undefined;
  text = withoutPort(text);
  const zone = text.indexOf('%');
  if (zone !== -1) text = text.slice(0, zone);
  if (isIPv4(text)) return text;
  if (!isIPv6(text)) return text.toLowerCase();
  const groups = ipv6Groups(text);
  if (isIpv4Mapped(groups) || isNat64(groups)) return ipv4FromGroups(groups[6] ?? 0, groups[7] ?? 0);
  return formatIpv6(maskGroups(groups, subnet), subnet);
}

/**
 * The `client_ip` descriptor: the whole client address, normalised as {@link normalizeIp} does (port and zone
 * dropped, IPv4-mapped and NAT64 folded to IPv4) but never cut to a subnet, so a rule can name one IPv6 host.
 */
export function clientAddress(address: string | undefined): string | undefined {
  return normalizeIp(address, 128);
}

/** The eight 16-bit groups of a valid IPv6 address (an embedded dotted IPv4 tail included). */
export function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase();
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    const [a = 0, b = 0, c = 0, d = 0] = tail.split('.').map(Number);
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const restGroups = rest === undefined || rest === '' ? [] : rest.split(':');
  const zeros =
    rest === undefined ? [] : new Array<string>(8 - headGroups.length - restGroups.length).fill('0');
  return [...headGroups, ...zeros, ...restGroups].map((group) => Number.parseInt(group, 16));
}

/** `[v6]:port` and `[v6]` to the address; `a.b.c.d:port` to the IPv4 address; anything else as it is. */
function withoutPort(text: string): string {
  if (text.startsWith('[')) {
    const end = text.indexOf(']');
    if (end !== -1 && (end === text.length - 1 || PORT.test(text.slice(end + 1)))) return text.slice(1, end);
    return text;
  }
  // A bare IPv6 address has several colons, and its last group may look like a port: only IPv4 has one.
  const colon = text.indexOf(':');
  if (colon === -1 || colon !== text.lastIndexOf(':') || !PORT.test(text.slice(colon))) return text;
  const address = text.slice(0, colon);
  return isIPv4(address) ? address : text;
}

/** `:` and a port number. */
const PORT = /^:\d{1,5}$/;

/** `::ffff:a.b.c.d`: an IPv4 client on a dual-stack socket. */
export function isIpv4Mapped(groups: readonly number[]): boolean {
  return groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;
}

/** The NAT64 well-known prefix 64:ff9b::/96 (RFC 6052): the last 32 bits are the IPv4 client's address. */
export function isNat64(groups: readonly number[]): boolean {
  return groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((group) => group === 0);
}

function ipv4FromGroups(high: number, low: number): string {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/** Keeps the first `bits` bits of the address and zeroes the rest. */
function maskGroups(groups: readonly number[], bits: number): number[] {
  return groups.map((group, index) => {
    const keep = Math.min(16, Math.max(0, bits - index * 16));
    return keep === 0 ? 0 : group & ((0xffff << (16 - keep)) & 0xffff);
  });
}

/** RFC 5952 text (longest run of zero groups compressed), with `/len` unless it is a whole address. */
export function formatIpv6(groups: readonly number[], bits: number): string {
  let bestStart = -1;
  let bestLength = 1; // a single zero group is not compressed
  for (let start = 0; start < groups.length; ) {
    let end = start;
    while (end < groups.length && groups[end] === 0) end++;
    if (end - start > bestLength) {
      bestStart = start;
      bestLength = end - start;
    }
    start = end === start ? start + 1 : end;
  }
  const hex = groups.map((group) => group.toString(16));
  const text =
    bestStart === -1
      ? hex.join(':')
      : `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
  return bits >= 128 ? text : `${text}/${bits}`;
}
