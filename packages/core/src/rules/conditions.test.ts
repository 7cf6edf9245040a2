import { describe, expect, it } from 'vitest';
import { formatProblem, RulesError } from '../base/errors.js';
import { valueList } from '../lists/valueList.js';
import { normalizeIp } from '../net/ip.js';
import { compileRules } from './compile.js';
import type { Descriptors } from './contract.js';
import { parseRules } from './parse.js';
import type { RuleSpec } from './schema.js';

const limit = { requests: 10, per: '1s' };
const namesOf = (rules: readonly { name: string }[]) => rules.map((rule) => rule.name);
const table = (rules: RuleSpec[]) => compileRules({ rules });

function problemsOf(yaml: string): string[] {
  try {
    parseRules(yaml, { source: 'rules.yaml', today: '2026-03-01' });
  } catch (error) {
    if (error instanceof RulesError) return error.problems.map(formatProblem);
    throw error;
  }
  throw new Error('parsed without errors');
}

describe('match on CIDR ranges', () => {
  const rules = table([
    { name: 'private', match: { ip: ['10.0.0.0/8', '192.168.0.0/16'] }, key: ['ip'], limit },
    { name: 'doc_v6', match: { ip: '2001:db8::/32' }, key: ['ip'], limit },
    { name: 'one_host', match: { ip: '203.0.113.7' }, key: ['ip'], limit },
    { name: 'host_v6', match: { ip: '2001:db8:0:1::42/128' }, key: ['ip'], limit },
    { name: 'mapped', match: { ip: '::ffff:172.16.0.0/108' }, key: ['ip'], limit },
  ]);
  const match = (descriptors: Descriptors) => namesOf(rules.match(descriptors, 0));
  const ip = (address: string) => normalizeIp(address) as string;

  it('matches IPv4 clients inside a range and not outside it', () => {
    expect(match({ ip: '10.200.3.4' })).toEqual(['private']);
    expect(match({ ip: '192.168.255.1' })).toEqual(['private']);
    expect(match({ ip: '11.0.0.1' })).toEqual([]);
    expect(match({ ip: '192.169.0.1' })).toEqual([]);
  });

  it('takes a bare address as a single host', () => {
    expect(match({ ip: '203.0.113.7' })).toEqual(['one_host']);
    expect(match({ ip: '203.0.113.8' })).toEqual([]);
  });

  it('matches the ip descriptor of an IPv6 client (its /64) against shorter ranges', () => {
    expect(match({ ip: ip('2001:db8:5:6::1') })).toEqual(['doc_v6']);
    expect(match({ ip: ip('2001:db9::1') })).toEqual([]);
  });

  it('matches a range longer than the /64 only on client_ip, the whole address inside that /64', () => {
    expect(match({ ip: ip('2001:db8:0:1::42') })).toEqual(['doc_v6']);
    expect(match({ ip: ip('2001:db8:0:1::42'), client_ip: '2001:db8:0:1::42' })).toEqual([
      'doc_v6',
      'host_v6',
    ]);
    expect(match({ ip: ip('2001:db8:0:1::42'), client_ip: '2001:db8:0:1::43' })).toEqual(['doc_v6']);
    // A client_ip outside the ip descriptor's subnet is not believed.
    expect(match({ ip: ip('2001:db8:0:2::1'), client_ip: '2001:db8:0:1::42' })).toEqual(['doc_v6']);
  });

  it('folds IPv4-mapped ranges and clients to IPv4', () => {
    expect(match({ ip: ip('::ffff:172.16.9.9') })).toEqual(['mapped']);
    expect(match({ ip: '172.16.9.9' })).toEqual(['mapped']);
    expect(match({ ip: '172.32.0.1' })).toEqual([]);
  });

  it('finds a rule once when several of its ranges hold the address', () => {
    const nested = table([
      { name: 'wide', match: { ip: ['10.0.0.0/8', '10.1.0.0/16', '10.1.2.3'] }, key: ['ip'], limit },
      { name: 'plain', key: ['ip'], limit },
    ]);
    expect(namesOf(nested.match({ ip: '10.1.2.3' }, 0))).toEqual(['wide', 'plain']);
  });

  it('never matches a value that is not an address', () => {
    expect(match({ ip: 'unknown' })).toEqual([]);
    expect(match({ ip: '10.0.0.1, 1.2.3.4' })).toEqual([]);
  });

  it('keeps file order across the equality index and the prefix tree', () => {
    const mixed = table([
      { name: 'by_route', match: { route: '/a' }, key: ['ip'], limit },
      { name: 'by_range', match: { ip: '10.0.0.0/8' }, key: ['ip'], limit },
      { name: 'by_both', match: { route: '/a', ip: '10.0.0.0/8' }, key: ['ip'], limit },
      { name: 'all', key: ['ip'], limit },
    ]);
    expect(namesOf(mixed.match({ ip: '10.0.0.1', route: '/a' }, 0))).toEqual([
      'by_route',
      'by_range',
      'by_both',
      'all',
    ]);
    expect(namesOf(mixed.match({ ip: '9.0.0.1', route: '/a' }, 0))).toEqual(['by_route', 'all']);
  });
});

describe('match with not', () => {
  const rules = table([
    { name: 'tenants', match: { tenant: { not: ['internal', 'staff'] } }, key: ['tenant'], limit },
    { name: 'outside', match: { ip: { not: ['10.0.0.0/8'] } }, key: ['ip'], limit },
  ]);
  const match = (descriptors: Descriptors) => namesOf(rules.match(descriptors, 0));

  it('matches every value but those listed', () => {
    expect(match({ tenant: 'acme' })).toEqual(['tenants']);
    expect(match({ tenant: 'internal' })).toEqual([]);
    expect(match({ tenant: 'staff' })).toEqual([]);
  });

  it('never matches a request without the descriptor', () => {
    expect(match({})).toEqual([]);
  });

  it('negates ranges', () => {
    expect(match({ ip: '10.1.1.1' })).toEqual([]);
    expect(match({ ip: '8.8.8.8' })).toEqual(['outside']);
  });
});

describe('match on lists', () => {
  const rules = table([
    { name: 'blocked', match: { ip: { list: 'blocked_ips' } }, key: ['ip'], limit },
    { name: 'partners', match: { tenant: { not: { list: 'partners' } } }, key: ['tenant'], limit },
  ]);
  const lists = {
    blocked_ips: valueList(['198.51.100.0/24', '2001:db8::/48']),
    partners: valueList(['acme']),
  };

  it('reads the list given at match time', () => {
    expect(namesOf(rules.match({ ip: '198.51.100.9' }, 0, lists))).toEqual(['blocked']);
    expect(namesOf(rules.match({ ip: '198.51.101.9' }, 0, lists))).toEqual([]);
    expect(namesOf(rules.match({ ip: normalizeIp('2001:db8:0:7::1') as string }, 0, lists))).toEqual([
      'blocked',
    ]);
    expect(namesOf(rules.match({ tenant: 'acme' }, 0, lists))).toEqual([]);
    expect(namesOf(rules.match({ tenant: 'other' }, 0, lists))).toEqual(['partners']);
  });

  it('names the lists the table reads', () => {
    expect(rules.lists).toEqual(['blocked_ips', 'partners']);
  });

  it('treats a list it was not given as empty', () => {
    expect(namesOf(rules.match({ ip: '198.51.100.9' }, 0))).toEqual([]);
  });
});

describe('rules errors for ranges and match forms', () => {
  it('reports a bad CIDR range with file, line and column', () => {
    const yaml = [
      'domain: d',
      'rules:',
      '  - name: a',
      '    owner: o',
      '    match: {ip: [10.0.0.0/8, 10.0.0.0/33, "2001:db8::/200"]}',
      '    key: [ip]',
      '    limit: {requests: 1, per: 1s}',
      '  - name: b',
      '    owner: o',
      '    match:',
      '      ip: {not: [10.0.0.1/8, banana]}',
      '    key: [ip]',
      '    limit: {requests: 1, per: 1s}',
    ].join('\n');
    expect(problemsOf(yaml)).toEqual([
      'rules.yaml:5:30 rules[0].match.ip[1]: "10.0.0.0/33" has a prefix length outside 0–32',
      'rules.yaml:5:43 rules[0].match.ip[2]: "2001:db8::/200" has a prefix length outside 0–128',
      'rules.yaml:11:18 rules[1].match.ip.not[0]: "10.0.0.1/8" has bits set past /8: did you mean 10.0.0.0/8?',
      'rules.yaml:11:30 rules[1].match.ip.not[1]: "banana" is not an IP address or CIDR range',
    ]);
  });

  it('reports a bad match form', () => {
    const yaml = [
      'domain: d',
      'rules:',
      '  - name: a',
      '    owner: o',
      '    match: {tenant: {nott: [x]}, route: {list: Bad-Name}, api_key: {not: {not: [x]}}}',
      '    key: [tenant]',
      '    limit: {requests: 1, per: 1s}',
    ].join('\n');
    expect(problemsOf(yaml)).toEqual([
      'rules.yaml:5:21 rules[0].match.tenant: `match.tenant` must be {list: name} or {not: [values]}, got a map',
      'rules.yaml:5:41 rules[0].match.route: `match.route` must name a list (lowercase letters, digits and _), got "Bad-Name"',
      'rules.yaml:5:68 rules[0].match.api_key: `match.api_key` must not put a {not: ...} inside a {not: ...}: write the values to match',
    ]);
  });

  it('compiles ranges to canonical text, and rules without conditions as before', () => {
    const compiled = table([
      {
        name: 'r',
        match: { ip: ['10.0.0.0/8', '::ffff:10.0.0.0/104', '2001:DB8:0::/32'] },
        key: ['ip'],
        limit,
      },
      { name: 'plain', match: { route: '/a' }, key: ['ip'], limit },
    ]);
    expect(compiled.rules[0]?.conditions).toEqual({
      ip: { values: ['10.0.0.0/8', '2001:db8::/32'], not: false },
    });
    expect(compiled.rules[0]?.match).toEqual({});
    expect(compiled.rules[1]).not.toHaveProperty('conditions');
    expect(compiled.actions).toBe(false);
  });
});

describe('rules errors for actions', () => {
  it('refuses counting fields on deny and allow rules, a limit rule without a limit, and dangling exempts', () => {
    const yaml = [
      'domain: d',
      'rules:',
      '  - name: a',
      '    owner: o',
      '    action: deny',
      '    key: [ip]',
      '    limit: {requests: 1, per: 1s}',
      '  - name: b',
      '    owner: o',
      '    action: allow',
      '    mode: shadow',
      '    exempt: [a, nope]',
      '  - name: c',
      '    owner: o',
      '    key: [ip]',
      '    exempt: [a]',
      '  - name: d',
      '    owner: o',
      '    action: block',
    ].join('\n');
    expect(problemsOf(yaml)).toEqual([
      'rules.yaml:6:5 rules[0].key: a deny rule counts nothing: remove key',
      'rules.yaml:7:5 rules[0].limit: a deny rule counts nothing: remove limit',
      'rules.yaml:11:11 rules[1].mode: an allow rule refuses nothing, so it has no shadow mode: remove mode',
      'rules.yaml:12:17 rules[1].exempt[1]: no rule is named "nope"',
      'rules.yaml:13:5 rules[2].limit: missing required field "limit"',
      'rules.yaml:16:13 rules[2].exempt: exempt belongs to an allow rule (action: allow)',
      'rules.yaml:19:13 rules[3].action: `action` must be limit, deny or allow, got "block"',
    ]);
  });
});
