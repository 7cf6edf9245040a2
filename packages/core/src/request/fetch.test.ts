import { describe, expect, it } from 'vitest';
import { buildDescriptors } from './descriptors.js';
import { FetchFacts, forwardedTrust, requestTarget } from './fetch.js';
import { proxyNotice } from './proxy.js';

const XFF = '198.51.100.1, 203.0.113.5, 10.0.0.2';
const PEER = '10.0.0.1';

describe('forwardedTrust', () => {
  it('trusts no proxy by default: the peer is the client, whatever X-Forwarded-For says', () => {
    for (const setting of [undefined, false, 0, []] as const) {
      const trust = forwardedTrust(setting);
      expect(trust.trust).toBe('none');
      expect(trust.clientAddress(PEER, XFF)).toBe(PEER);
    }
  });

  it('trusts every hop with true: the leftmost entry, which the client writes', () => {
    const trust = forwardedTrust(true);
    expect(trust.trust).toBe('all');
    expect(trust.clientAddress(PEER, XFF)).toBe('198.51.100.1');
    expect(trust.clientAddress(PEER, null)).toBe(PEER);
  });

  it('counts hops as Express does: n trusted hops name the client n entries from the right', () => {
    expect(forwardedTrust(1).trust).toBe('bounded');
    expect(forwardedTrust(1).clientAddress(PEER, XFF)).toBe('10.0.0.2');
    expect(forwardedTrust(2).clientAddress(PEER, XFF)).toBe('203.0.113.5');
    // More hops trusted than there are: the farthest known, never undefined.
    expect(forwardedTrust(9).clientAddress(PEER, XFF)).toBe('198.51.100.1');
    expect(forwardedTrust(1).clientAddress(PEER, null)).toBe(PEER);
    expect(forwardedTrust(1).clientAddress(PEER, ' , ')).toBe(PEER);
  });

  it('walks past trusted proxy addresses and ranges to the first hop that is not one', () => {
    const trust = forwardedTrust(['10.0.0.0/8', '2001:db8::1']);
    expect(trust.trust).toBe('bounded');
    expect(trust.clientAddress(PEER, XFF)).toBe('203.0.113.5');
    // An IPv4-mapped peer is the same proxy.
    expect(trust.clientAddress('::ffff:10.0.0.1', '198.51.100.9')).toBe('198.51.100.9');
    expect(trust.clientAddress('2001:db8::1', '198.51.100.9')).toBe('198.51.100.9');
    // A peer that is not a trusted proxy is the client: its X-Forwarded-For is made up.
    expect(trust.clientAddress('192.0.2.1', XFF)).toBe('192.0.2.1');
    // Garbage in the header stops the walk there rather than being skipped.
    expect(trust.clientAddress(PEER, '198.51.100.1, not-an-ip')).toBe('not-an-ip');
    expect(trust.clientAddress(undefined, null)).toBeUndefined();
  });

  it('refuses a bad setting at start, saying what is wrong', () => {
    expect(() => forwardedTrust(-1)).toThrow(/option "trustProxy": a hop count must be a whole number >= 0/);
    expect(() => forwardedTrust(1.5)).toThrow(/a hop count must be a whole number/);
    expect(() => forwardedTrust(['10.0.0.0/33'])).toThrow(
      /option "trustProxy": "10.0.0.0\/33" has a prefix length/,
    );
    expect(() => forwardedTrust(['proxy.local'])).toThrow(/"proxy.local" is not an IP address or CIDR range/);
    // A string is Express's address list: a word that is no address or named range is refused as one.
    expect(() => forwardedTrust('yes')).toThrow(/"yes" is not an IP address or CIDR range/);
    expect(() => forwardedTrust({} as never)).toThrow(/must be true, false, a hop count, proxy addresses/);
  });
});

describe('requestTarget', () => {
  it('is the path and query of an absolute URL, without the fragment', () => {
    expect(requestTarget('http://127.0.0.1:3000/search?q=a')).toBe('/search?q=a');
    expect(requestTarget('https://example.com')).toBe('/');
    expect(requestTarget('http://h/a/b#frag')).toBe('/a/b');
    expect(requestTarget('/already/a/path')).toBe('/already/a/path');
  });
});

describe('FetchFacts', () => {
  const settings = {
    ipv6Subnet: 64,
    caseSensitiveRoutes: false,
    apiKeyHeader: 'x-api-key',
    maxValueLength: 256,
  };

  it('gives the descriptors of a Fetch Request through the Headers API', () => {
    const request = new Request('http://127.0.0.1/Search?q=1', {
      method: 'POST',
      headers: { 'X-Api-Key': ' k_1 ', 'x-forwarded-for': '198.51.100.1' },
    });
    const facts = new FetchFacts(request, '2001:db8:1:2::7', 'none');
    expect(facts.header('x-api-key')).toBe('k_1'); // the Headers API trims values
    expect(facts.header('x-missing')).toBeUndefined();
    expect(buildDescriptors(facts, settings)).toEqual({
      ip: '2001:db8:1:2::/64',
      method: 'POST',
      route: '/search',
      api_key: 'k_1',
      auth: 'api_key',
    });
    // The proxy notices read the same facts as for Node requests.
    expect(proxyNotice(facts)).toBe('SLUICE_XFF_UNTRUSTED');
  });

  it('takes the route template the framework knows over the path', () => {
    const facts = new FetchFacts(new Request('http://h/users/7'), '192.0.2.1', 'bounded', '/users/:id');
    expect(buildDescriptors(facts, settings).route).toBe('/users/:id');
    expect(proxyNotice(facts)).toBeUndefined();
  });
});
