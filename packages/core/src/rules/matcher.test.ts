import { describe, expect, it } from 'vitest';
import { compileRules } from './compile.js';
import type { Descriptors } from './contract.js';
import type { RuleSpec } from './schema.js';

const limit = { requests: 10, per: '1s' };
const namesOf = (rules: readonly { name: string }[]) => rules.map((rule) => rule.name);

/** Descriptors that count how many times the matcher reads them. */
function countingReads(values: Record<string, string>): { descriptors: Descriptors; reads: () => number } {
  let reads = 0;
  const descriptors = new Proxy(values, {
    get(target, name) {
      reads++;
      return Reflect.get(target, name);
    },
  });
  return { descriptors, reads: () => reads };
}

describe('match', () => {
  const table = compileRules({
    rules: [
      { name: 'everyone', key: ['ip'], limit },
      { name: 'search', match: { route: '/search' }, key: ['ip'], limit },
      { name: 'writes', match: { method: ['POST', 'PUT'] }, key: ['ip'], limit },
      { name: 'search_writes', match: { route: '/search', method: 'POST' }, key: ['ip'], limit },
      { name: 'per_key', match: { route: '/search' }, key: ['api_key'], limit },
      { name: 'global', match: { route: '/search' }, key: [], global: true, limit },
    ],
  });

  it('applies every rule whose match fields all agree, in file order', () => {
    expect(namesOf(table.match({ ip: '1', route: '/search', method: 'POST', api_key: 'k' }, 0))).toEqual([
      'everyone',
      'search',
      'writes',
      'search_writes',
      'per_key',
      'global',
    ]);
    expect(namesOf(table.match({ ip: '1', route: '/other', method: 'PUT' }, 0))).toEqual([
      'everyone',
      'writes',
    ]);
    expect(namesOf(table.match({ ip: '1', route: '/search', method: 'GET' }, 0))).toEqual([
      'everyone',
      'search',
      'global',
    ]);
  });

  it('leaves out rules whose key descriptors the request lacks', () => {
    expect(namesOf(table.match({ route: '/search' }, 0))).toEqual(['global']);
  });

  it('returns a frozen result', () => {
    expect(Object.isFrozen(table.match({ ip: '1' }, 0))).toBe(true);
    expect(Object.isFrozen(table.match({}, 0))).toBe(true);
  });
});

describe('index', () => {
  const RULES = 10_000;
  const table = compileRules({
    rules: Array.from(
      { length: RULES },
      (_, i): RuleSpec => ({
        name: `tenant_${i}`,
        match: { auth: 'api_key', tenant: `t${i}` },
        key: ['api_key'],
        limit,
      }),
    ),
  });

  it('finds the one matching rule among 10,000', () => {
    expect(namesOf(table.match({ tenant: 't7321', auth: 'api_key', api_key: 'k' }, 0))).toEqual([
      'tenant_7321',
    ]);
    expect(table.match({ tenant: 't7321', auth: 'anonymous', api_key: 'k' }, 0)).toEqual([]);
    expect(table.match({ tenant: 'nobody', auth: 'api_key', api_key: 'k' }, 0)).toEqual([]);
  });

  it('examines only candidate rules: a handful of descriptor reads, not one per rule', () => {
    // Every rule shares auth=api_key, so indexing on auth would make all 10,000 candidates; tenant is chosen.
    const request = countingReads({ tenant: 't42', auth: 'api_key', api_key: 'k' });
    expect(namesOf(table.match(request.descriptors, 0))).toEqual(['tenant_42']);
    expect(request.reads()).toBeLessThan(10);
  });
});

describe('overrides', () => {
  const table = compileRules({
    rules: [
      { name: 'key_default', match: { auth: 'api_key' }, key: ['api_key'], limit },
      {
        name: 'key_tenant',
        match: { auth: 'api_key', tenant: 'acme' },
        key: ['api_key'],
        limit,
        overrides: 'key_default',
      },
      {
        name: 'key_tenant_search',
        match: { tenant: 'acme', route: '/search' },
        key: ['api_key'],
        limit,
        overrides: 'key_tenant',
      },
      { name: 'search_global', match: { route: '/search' }, key: [], global: true, limit },
    ],
  });
  const acme = { auth: 'api_key', tenant: 'acme', api_key: 'k' };

  it('the overriding rule replaces the overridden one where both match', () => {
    expect(namesOf(table.match(acme, 0))).toEqual(['key_tenant']);
  });

  it('elsewhere the overridden rule still applies', () => {
    expect(namesOf(table.match({ auth: 'api_key', tenant: 'other', api_key: 'k' }, 0))).toEqual([
      'key_default',
    ]);
  });

  it('is transitive: overriding a rule also replaces what that rule overrides', () => {
    expect(namesOf(table.match({ ...acme, route: '/search' }, 0))).toEqual([
      'key_tenant_search',
      'search_global',
    ]);
    // Without auth only key_tenant_search matches; it removes the whole chain it overrides, harmlessly.
    expect(namesOf(table.match({ tenant: 'acme', route: '/search', api_key: 'k' }, 0))).toEqual([
      'key_tenant_search',
      'search_global',
    ]);
  });

  it('a rule that does not apply overrides nothing: missing key descriptors, or expired', () => {
    const keyed = compileRules({
      rules: [
        { name: 'per_ip', key: ['ip'], limit },
        { name: 'per_key', key: ['api_key'], limit, overrides: 'per_ip' },
      ],
    });
    expect(namesOf(keyed.match({ ip: '1', api_key: 'k' }, 0))).toEqual(['per_key']);
    expect(namesOf(keyed.match({ ip: '1' }, 0))).toEqual(['per_ip']);
    const expiring = compileRules({
      rules: [
        { name: 'base', key: ['ip'], limit },
        { name: 'temporary', key: ['ip'], limit, overrides: 'base', expires: '2027-01-15' },
      ],
    });
    expect(namesOf(expiring.match({ ip: '1' }, Date.UTC(2027, 0, 15, 23)))).toEqual(['temporary']);
    expect(namesOf(expiring.match({ ip: '1' }, Date.UTC(2027, 0, 16)))).toEqual(['base']);
  });
});

describe('expiry', () => {
  const table = compileRules({
    rules: [
      { name: 'block', key: ['ip'], limit: { requests: 0, per: '1m' }, expires: '2027-01-15' },
      { name: 'until_noon', key: ['ip'], limit, expires: '2027-01-15T12:00:00Z' },
    ],
  });

  it('a date expires at the end of that UTC day; a datetime at that instant', () => {
    const at = (iso: string) => namesOf(table.match({ ip: '1' }, Date.parse(iso)));
    expect(at('2027-01-15T11:59:59.999Z')).toEqual(['block', 'until_noon']);
    expect(at('2027-01-15T12:00:00Z')).toEqual(['block']);
    expect(at('2027-01-15T23:59:59.999Z')).toEqual(['block']);
    expect(at('2027-01-16T00:00:00Z')).toEqual([]);
  });
});
