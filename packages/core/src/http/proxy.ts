import type { RequestFacts } from './descriptors.js';

/** How far the app trusts X-Forwarded-For: not at all, a bounded number of hops or list of proxies, or entirely. */
export type ProxyTrust = 'none' | 'bounded' | 'all';

/** Runtime smells about proxy trust, logged once each; silence one with the `silence` option. */
export const PROXY_NOTICES = {
  SLUICE_XFF_UNTRUSTED:
    'requests carry X-Forwarded-For but the app does not trust proxies, so every client behind a proxy shares ' +
    "the proxy's IP limit. If a proxy sits in front of the app, trust it (Fastify trustProxy, Express " +
    "'trust proxy', Koa app.proxy).",
  SLUICE_TRUST_ALL_PROXIES:
    'the app trusts every proxy, so a client can choose its own IP with X-Forwarded-For and escape per-IP ' +
    'limits. Trust a hop count or the proxy addresses instead (Koa: set app.maxIpsCount).',
} as const;

/** A proxy notice code. */
export type ProxyNotice = keyof typeof PROXY_NOTICES;

/** The notice a request gives reason for, if any. */
export function proxyNotice(facts: RequestFacts): ProxyNotice | undefined {
  if (facts.proxyTrust === 'all') return 'SLUICE_TRUST_ALL_PROXIES';
  if (facts.proxyTrust === 'none' && facts.header('x-forwarded-for') !== undefined)
    return 'SLUICE_XFF_UNTRUSTED';
  return undefined;
}
