import { describe, expect, it } from 'vitest';
import { normalizeIp } from './ip.js';

describe('normalizeIp', () => {
  it('keeps IPv4 as it is', () => {
    expect(normalizeIp('203.0.113.7')).toBe('203.0.113.7');
  });

  it('folds IPv4-mapped IPv6 to IPv4, in dotted and hex form', () => {
    expect(normalizeIp('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(normalizeIp('::FFFF:cb00:7107')).toBe('203.0.113.7');
  });

  it('keys IPv6 by its /64, so addresses inside one /64 share a key', () => {
    const a = normalizeIp('2001:db8:1:2:aaaa::1');
    expect(a).toBe('2001:db8:1:2::/64');
    expect(normalizeIp('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe(a);
    expect(normalizeIp('2001:db8:1:3::1')).not.toBe(a);
  });

  it('takes another prefix length, and /128 keeps the whole address', () => {
    expect(normalizeIp('2001:db8:1:2:3:4:5:6', 48)).toBe('2001:db8:1::/48');
    expect(normalizeIp('2001:db8:1:2:3:4:5:6', 56)).toBe('2001:db8:1::/56');
    expect(normalizeIp('2001:db8:1:2ff:3:4:5:6', 56)).toBe('2001:db8:1:200::/56');
    expect(normalizeIp('2001:DB8::0:1', 128)).toBe('2001:db8::1');
  });

  it('handles loopback, brackets and zone ids', () => {
    expect(normalizeIp('::1', 128)).toBe('::1');
    expect(normalizeIp('::1')).toBe('::/64');
    expect(normalizeIp('[fe80::1%eth0]', 128)).toBe('fe80::1');
  });

  it('returns anything else trimmed and lower-cased, and nothing for nothing', () => {
    expect(normalizeIp(' Not-An-IP ')).toBe('not-an-ip');
    expect(normalizeIp('')).toBeUndefined();
    expect(normalizeIp(undefined)).toBeUndefined();
  });

  it('drops a port, as proxies write it in X-Forwarded-For: IP:port and [v6]:port', () => {
    expect(normalizeIp('203.0.113.7:51234')).toBe('203.0.113.7');
    expect(normalizeIp('203.0.113.7:1')).toBe(normalizeIp('203.0.113.7:65535'));
    expect(normalizeIp('[2001:db8:1:2::1]:443', 128)).toBe('2001:db8:1:2::1');
    expect(normalizeIp('[2001:db8:1:2::1]:443')).toBe('2001:db8:1:2::/64');
    expect(normalizeIp('[::ffff:203.0.113.7]:8080')).toBe('203.0.113.7');
    expect(normalizeIp('[fe80::1%eth0]:80', 128)).toBe('fe80::1');
  });

  it('leaves a bare IPv6 address whole, even when its last group looks like a port', () => {
    expect(normalizeIp('2001:db8::1:443', 128)).toBe('2001:db8::1:443');
    expect(normalizeIp('::1:80', 128)).toBe('::1:80');
  });

  it('keeps text that only looks like an address with a port as text', () => {
    expect(normalizeIp('host.example:80')).toBe('host.example:80');
    expect(normalizeIp('203.0.113.7:123456')).toBe('203.0.113.7:123456');
    expect(normalizeIp('[2001:db8::1]:x')).toBe('[2001:db8::1]:x');
  });

  it('keys a NAT64 address (64:ff9b::/96) by the IPv4 client it embeds', () => {
    expect(normalizeIp('64:ff9b::203.0.113.7')).toBe('203.0.113.7');
    expect(normalizeIp('64:ff9b::cb00:7107')).toBe('203.0.113.7');
    expect(normalizeIp('[64:ff9b::cb00:7107]:443')).toBe('203.0.113.7');
    // Another prefix is an ordinary IPv6 address.
    expect(normalizeIp('64:ff9b:1::cb00:7107', 128)).toBe('64:ff9b:1::cb00:7107');
  });
});
