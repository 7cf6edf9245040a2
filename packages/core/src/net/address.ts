import { isIPv6 } from 'node:net';
import { formatIpv6, ipv6Groups, isIpv4Mapped, isNat64 } from './ip.js';

/** An address or a range as bits: IPv4 in one 32-bit word, IPv6 in four; only the first `bits` count. */
export interface AddressBits {
  readonly v6: boolean;
  readonly words: readonly number[];
  readonly bits: number;
}

/** Descriptors whose values are client addresses: `match` reads IPs and CIDR ranges there, not text. */
export const ADDRESS_FIELDS: ReadonlySet<string> = new Set(['ip', 'client_ip']);

/** True for an IPv4 or IPv6 address, with or without a `/len`: an entry for the prefix tree, not the text set. */
export function looksLikeAddress(text: string): boolean {
  const slash = text.indexOf('/');
  const head = slash === -1 ? text : text.slice(0, slash);
  return parseIpv4(head) !== undefined || isIPv6(head);
}

/**
 * Parses an address or CIDR range as written in rules and lists: `10.0.0.0/8`, `2001:db8::/32`, `192.0.2.7`
 * (a /32), `::ffff:10.0.0.0/104` (folded to `10.0.0.0/8`, as client addresses are). Returns the range, or a
 * message saying what is wrong: a bad address, a bad length, or bits set past the prefix.
 */
export function parseRange(text: string): AddressBits | string {
  const range = parseBits(text);
  if (typeof range === 'string' || hostBitsClear(range)) return range;
  return `"${text}" has bits set past /${range.bits}: did you mean ${formatRange(masked(range))}?`;
}

/** An address with an optional `/len`, mapped forms folded; bits past the prefix are left as written. */
function parseBits(text: string): AddressBits | string {
  const slash = text.indexOf('/');
  const head = slash === -1 ? text : text.slice(0, slash);
  const v4 = parseIpv4(head);
  if (v4 === undefined && !isIPv6(head)) return `"${text}" is not an IP address or CIDR range`;
  const max = v4 === undefined ? 128 : 32;
  const bits = slash === -1 ? max : prefixLength(text, slash + 1);
  if (!(bits <= max)) return `"${text}" has a prefix length outside 0–${max}`;
  return v4 === undefined ? foldMapped(wordsOfIpv6(head), bits) : { v6: false, words: [v4], bits };
}

/** The decimal number (1 to 3 digits) from `start` to the end of `text`; NaN otherwise. */
function prefixLength(text: string, start: number): number {
  const length = text.length - start;
  if (length < 1 || length > 3) return Number.NaN;
  let value = 0;
  for (let i = start; i < text.length; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return Number.NaN;
    value = value * 10 + digit;
  }
  return value;
}

/**
 * The bits of a descriptor value: `203.0.113.7` (32 bits), a masked IPv6 `2001:db8:1:2::/64` as the `ip`
 * descriptor writes it (64 bits known), or a whole IPv6 address. Undefined for anything else.
 */
export function parseAddress(text: string): AddressBits | undefined {
  if (text === lastText) return lastBits;
  // A descriptor is an address, not a range someone wrote: bits past a /64 are zero already, unchecked.
  const parsed = parseBits(text);
  lastText = text;
  lastBits = typeof parsed === 'string' ? undefined : parsed;
  return lastBits;
}

// A request's descriptor is read by every condition on it: one parse serves them all.
let lastText: string | undefined;
let lastBits: AddressBits | undefined;

/** Canonical text of a range: `10.0.0.0/8`, `2001:db8::/32`; a whole address keeps its `/32` or `/128`. */
export function formatRange(range: AddressBits): string {
  if (!range.v6) {
    const w = range.words[0] ?? 0;
    return `${w >>> 24}.${(w >>> 16) & 0xff}.${(w >>> 8) & 0xff}.${w & 0xff}/${range.bits}`;
  }
  const groups = range.words.flatMap((w) => [w >>> 16, w & 0xffff]);
  const text = formatIpv6(groups, range.bits);
  return range.bits >= 128 ? `${text}/128` : text;
}

/** Bit `index` (0 = most significant) of an address. */
export function bitAt(words: readonly number[], index: number): number {
  return ((words[index >>> 5] ?? 0) >>> (31 - (index & 31))) & 1;
}

/** True when `outer`'s first `outer.bits` bits equal `inner`'s (and `inner` knows at least that many). */
export function covers(outer: AddressBits, inner: AddressBits): boolean {
  if (outer.v6 !== inner.v6 || inner.bits < outer.bits) return false;
  for (let i = 0; i < outer.bits; i++) if (bitAt(outer.words, i) !== bitAt(inner.words, i)) return false;
  return true;
}

/** A dotted IPv4 address as an unsigned 32-bit number; undefined unless it is exactly four numbers 0–255. */
function parseIpv4(text: string): number | undefined {
  let value = 0;
  let part = 0;
  let digits = 0;
  let parts = 0;
  for (let i = 0; i <= text.length; i++) {
    const code = i === text.length ? 46 : text.charCodeAt(i);
    if (code === 46) {
      // "." (or the end): a part of 1 to 3 digits, no leading zero, at most 255.
      if (digits === 0 || part > 255 || (digits > 1 && text.charCodeAt(i - digits) === 48)) return undefined;
      value = value * 256 + part;
      parts++;
      part = 0;
      digits = 0;
    } else if (code >= 48 && code <= 57 && digits < 3) {
      part = part * 10 + code - 48;
      digits++;
    } else return undefined;
  }
  return parts === 4 ? value : undefined;
}

function wordsOfIpv6(text: string): number[] {
  const groups = ipv6Groups(text);
  return [0, 2, 4, 6].map((i) => (((groups[i] ?? 0) << 16) | (groups[i + 1] ?? 0)) >>> 0);
}

/** `::ffff:a.b.c.d/96+n` and NAT64 `64:ff9b::a.b.c.d/96+n` as the IPv4 range `/n`, as clients are keyed. */
function foldMapped(words: number[], bits: number): AddressBits {
  const groups = words.flatMap((w) => [w >>> 16, w & 0xffff]);
  if (bits >= 96 && (isIpv4Mapped(groups) || isNat64(groups))) {
    return { v6: false, words: [words[3] ?? 0], bits: bits - 96 };
  }
  return { v6: true, words, bits };
}

function hostBitsClear(range: AddressBits): boolean {
  const size = range.v6 ? 128 : 32;
  for (let i = range.bits; i < size; i++) if (bitAt(range.words, i) === 1) return false;
  return true;
}

function masked(range: AddressBits): AddressBits {
  const words = range.words.map((word, index) => {
    const keep = Math.min(32, Math.max(0, range.bits - index * 32));
    return keep === 0 ? 0 : (word & ~(2 ** (32 - keep) - 1)) >>> 0;
  });
  return { ...range, words };
}
