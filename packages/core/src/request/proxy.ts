import type { NOTICE_CODES } from '../base/notices.js';
import type { ProxyTrust, RequestFacts } from './facts.js';

/** Still importable from here, where adapters and http/index.ts have always found it. */
export type { ProxyTrust } from './facts.js';

/** Runtime smells about proxy trust, logged once each; silence one with the `silence` option. */
export const PROXY_NOTICES = {
  SLUICE_XFF_UNTRUSTED:
    'requests carry X-Forwarded-For but the app does not trust proxies, so every client behind a proxy shares ' +
    "the proxy's IP limit. If a proxy sits in front of the app, trust it (the " +
    "framework's proxy setting, or the adapter's trustProxy option).",
  SLUICE_TRUST_ALL_PROXIES:
    'the app trusts every proxy, so a client can choose its own IP with X-Forwarded-For and escape per-IP ' +
    'limits. Trust a hop count or the proxy addresses instead (or cap the forwarded addresses read, where the ' +
    'framework can).',
  SLUICE_FORWARDED_IGNORED:
    'requests carry a Forwarded header (RFC 7239) and no X-Forwarded-For. The frameworks read the ' +
    'client IP from X-Forwarded-For only, so the Forwarded header is ignored and every client behind that ' +
    'proxy shares its IP limit. Have the proxy send X-Forwarded-For (and trust it), or set the ip descriptor ' +
    'yourself in descriptors(req).',
} as const satisfies Record<(typeof NOTICE_CODES.proxy)[number], string>;

/** A proxy notice code. */
export type ProxyNotice = keyof typeof PROXY_NOTICES;

/**
 * A framework's own proxy setting ('trust proxy', `trustProxy`) as the notices read it:
 * nothing trusted for a falsy one, every hop for `true`, bounded for a hop count, list or function.
 */
export function settingTrust(setting: unknown): ProxyTrust {
  if (!setting) return 'none';
  return setting === true ? 'all' : 'bounded';
}

/**
 * The first notice a request gives reason for that is not in `noticed` (codes already given or silenced),
 * if any.
 */
export function proxyNotice(
  facts: RequestFacts,
  noticed: ReadonlySet<string> = NONE,
): ProxyNotice | undefined {
  if (facts.proxyTrust === 'all' && !noticed.has('SLUICE_TRUST_ALL_PROXIES'))
    return 'SLUICE_TRUST_ALL_PROXIES';
  const forwardedFor = facts.header('x-forwarded-for') !== undefined;
  if (forwardedFor && facts.proxyTrust === 'none' && !noticed.has('SLUICE_XFF_UNTRUSTED'))
    return 'SLUICE_XFF_UNTRUSTED';
  if (!forwardedFor && !noticed.has('SLUICE_FORWARDED_IGNORED') && facts.header('forwarded') !== undefined)
    return 'SLUICE_FORWARDED_IGNORED';
  return undefined;
}

const NONE: ReadonlySet<string> = new Set();
