import { describe, expect, it } from 'vitest';
import { PrefixTree } from '../lists/prefixTree.js';
import { formatRange, parseAddress, parseRange } from './address.js';

const text = (value: string) => {
  const range = parseRange(value);
  return typeof range === 'string' ? range : formatRange(range);
};

describe('parseRange', () => {
  it.each([
    ['10.0.0.0/8', '10.0.0.0/8'],
    ['192.0.2.7', '192.0.2.7/32'],
    ['0.0.0.0/0', '0.0.0.0/0'],
    ['2001:DB8::/32', '2001:db8::/32'],
    ['::/0', '::/0'],
    ['2001:db8::1', '2001:db8::1/128'],
    ['::ffff:192.0.2.0/120', '192.0.2.0/24'],
    ['64:ff9b::192.0.2.9', '192.0.2.9/32'],
  ])('reads %s as %s', (value, expected) => {
    expect(text(value)).toBe(expected);
  });

  it.each([
    ['10.0.0.0/33', '"10.0.0.0/33" has a prefix length outside 0–32'],
    ['10.0.0.0/', '"10.0.0.0/" has a prefix length outside 0–32'],
    ['10.0.0.0/8x', '"10.0.0.0/8x" has a prefix length outside 0–32'],
    ['10.0.0/8', '"10.0.0/8" is not an IP address or CIDR range'],
    ['10.0.0.256', '"10.0.0.256" is not an IP address or CIDR range'],
    ['10.0.0.01', '"10.0.0.01" is not an IP address or CIDR range'],
    ['10.0.0.0.0', '"10.0.0.0.0" is not an IP address or CIDR range'],
    ['10..0.0', '"10..0.0" is not an IP address or CIDR range'],
    ['10.0.0.1/8', '"10.0.0.1/8" has bits set past /8: did you mean 10.0.0.0/8?'],
    ['2001:db8::1/32', '"2001:db8::1/32" has bits set past /32: did you mean 2001:db8::/32?'],
    ['2001:db8::/129', '"2001:db8::/129" has a prefix length outside 0–128'],
  ])('refuses %s', (value, message) => {
    expect(parseRange(value)).toBe(message);
  });
});

describe('PrefixTree', () => {
  it('finds every range holding an address, shortest first, and only within the bits the address knows', () => {
    const tree = new PrefixTree<string>();
    for (const range of [
      '10.0.0.0/8',
      '10.1.0.0/16',
      '10.1.2.3',
      '0.0.0.0/0',
      '2001:db8::/32',
      '2001:db8:0:1::5',
    ])
      tree.add(parseRange(range) as never, range);
    const found = (address: string) => {
      const into: string[] = [];
      tree.collect(parseAddress(address)!, into);
      return into;
    };
    expect(found('10.1.2.3')).toEqual(['0.0.0.0/0', '10.0.0.0/8', '10.1.0.0/16', '10.1.2.3']);
    expect(found('11.0.0.1')).toEqual(['0.0.0.0/0']);
    expect(found('2001:db8:0:1::/64')).toEqual(['2001:db8::/32']);
    expect(found('2001:db8:0:1::5')).toEqual(['2001:db8::/32', '2001:db8:0:1::5']);
    expect(tree.has(parseAddress('2001:db9::1')!)).toBe(false);
    expect(tree.size).toBe(6);
  });
});
