import { describe, expect, it } from 'vitest';
import type { RequestFacts } from './descriptors.js';
import { proxyNotice } from './proxy.js';

function facts(proxyTrust: RequestFacts['proxyTrust'], forwarded?: string): RequestFacts {
  return {
    ip: '10.0.0.1',
    method: 'GET',
    url: '/',
    ...(proxyTrust ? { proxyTrust } : {}),
    header: (name) => (name === 'x-forwarded-for' ? forwarded : undefined),
  };
}

describe('proxyNotice', () => {
  it('flags a forwarded header the app does not trust', () => {
    expect(proxyNotice(facts('none', '1.2.3.4'))).toBe('SLUICE_XFF_UNTRUSTED');
    expect(proxyNotice(facts('none'))).toBeUndefined();
  });

  it('flags trusting every proxy, and nothing for bounded or unknown trust', () => {
    expect(proxyNotice(facts('all'))).toBe('SLUICE_TRUST_ALL_PROXIES');
    expect(proxyNotice(facts('bounded', '1.2.3.4'))).toBeUndefined();
    expect(proxyNotice(facts(undefined, '1.2.3.4'))).toBeUndefined();
  });
});
