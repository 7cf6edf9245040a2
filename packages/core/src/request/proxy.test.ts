import { describe, expect, it } from 'vitest';
import { NoticeWatch, PROXY_EVERY_REQUEST, PROXY_SAMPLE } from '../http/notices.js';
import type { RequestFacts } from './descriptors.js';
import { PROXY_NOTICES, proxyNotice, settingTrust } from './proxy.js';

function facts(
  proxyTrust: RequestFacts['proxyTrust'],
  forwardedFor?: string,
  forwarded?: string,
): RequestFacts {
  const headers: Record<string, string | undefined> = {
    'x-forwarded-for': forwardedFor,
    forwarded,
  };
  return {
    ip: '10.0.0.1',
    method: 'GET',
    url: '/',
    ...(proxyTrust ? { proxyTrust } : {}),
    header: (name) => headers[name],
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

  it('flags a Forwarded header with no X-Forwarded-For, which no framework reads, whatever the trust', () => {
    for (const trust of ['none', 'bounded', undefined] as const)
      expect(proxyNotice(facts(trust, undefined, 'for=203.0.113.7'))).toBe('SLUICE_FORWARDED_IGNORED');
    expect(proxyNotice(facts('bounded', '203.0.113.7', 'for=203.0.113.7'))).toBeUndefined();
    expect(PROXY_NOTICES.SLUICE_FORWARDED_IGNORED).toMatch(/X-Forwarded-For/);
  });

  it('passes over notices already given or silenced', () => {
    const request = facts('all', undefined, 'for=203.0.113.7');
    expect(proxyNotice(request)).toBe('SLUICE_TRUST_ALL_PROXIES');
    expect(proxyNotice(request, new Set(['SLUICE_TRUST_ALL_PROXIES']))).toBe('SLUICE_FORWARDED_IGNORED');
    expect(
      proxyNotice(request, new Set(['SLUICE_TRUST_ALL_PROXIES', 'SLUICE_FORWARDED_IGNORED'])),
    ).toBeUndefined();
  });
});

describe('settingTrust', () => {
  it("reads a framework's proxy setting: falsy trusts nothing, true every hop, anything else a bounded set", () => {
    expect([false, undefined, 0, ''].map(settingTrust)).toEqual(['none', 'none', 'none', 'none']);
    expect(settingTrust(true)).toBe('all');
    expect([1, '10.0.0.0/8', ['::1'], () => true].map(settingTrust)).toEqual([
      'bounded',
      'bounded',
      'bounded',
      'bounded',
    ]);
  });
});

/** A NoticeWatch and the warnings it logs. */
function watching(): { watch: NoticeWatch; warnings: string[] } {
  const warnings: string[] = [];
  const logger = { warn: (text: string) => void warnings.push(text) };
  return { watch: new NoticeWatch({ logger, rawKeys: false, globalSeesPaths: false }), warnings };
}

describe('NoticeWatch proxy notices', () => {
  it('looks at every request at first, then at one in PROXY_SAMPLE: a proxy that appears later is still told of', () => {
    const { watch, warnings } = watching();
    const plain = facts('none');
    const proxied = facts('none', '203.0.113.7');
    for (let i = 0; i <= PROXY_EVERY_REQUEST; i++) watch.request(plain, undefined);
    // Past the first requests, one in PROXY_SAMPLE is looked at: the last of this run.
    for (let i = 0; i < PROXY_SAMPLE - 1; i++) watch.request(proxied, undefined);
    expect(warnings).toEqual([]);
    watch.request(proxied, undefined);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/\[SLUICE_XFF_UNTRUSTED\]$/);
  });

  it('tells of a proxy header among the first requests at once', () => {
    const { watch, warnings } = watching();
    watch.request(facts('none'), undefined);
    watch.request(facts('none', '203.0.113.7'), undefined);
    expect(warnings).toHaveLength(1);
  });
});

describe('NoticeWatch descriptor notices', () => {
  it("looks at the app's descriptors as at the proxy headers: every set at first, then one in PROXY_SAMPLE", () => {
    const { watch, warnings } = watching();
    const raw = { client: '2001:db8::1' };
    for (let i = 0; i <= PROXY_EVERY_REQUEST; i++) watch.descriptors({ client: '203.0.113.7' });
    for (let i = 0; i < PROXY_SAMPLE - 1; i++) watch.descriptors(raw);
    expect(warnings).toEqual([]);
    watch.descriptors(raw);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/\[SLUICE_RAW_IPV6_KEY\]$/);
  });
});
