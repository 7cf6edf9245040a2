import { describe, expect, it } from 'vitest';
import { compileRules } from '../rules/index.js';
import { buildDescriptors, type DescriptorSettings, type RequestFacts, retryAttempt } from './descriptors.js';
import { usedDescriptors } from './used.js';

const settings: DescriptorSettings = {
  ipv6Subnet: 64,
  caseSensitiveRoutes: false,
  apiKeyHeader: 'x-api-key',
  maxValueLength: 256,
};

function facts(
  overrides: Partial<RequestFacts> = {},
  headers: Record<string, string | string[]> = {},
): RequestFacts {
  return {
    ip: '::ffff:10.0.0.1',
    method: 'get',
    url: '/Search/?q=1',
    header: (name) => headers[name],
    ...overrides,
  };
}

describe('buildDescriptors', () => {
  it('builds ip, method, route and auth for an anonymous request', () => {
    expect(buildDescriptors(facts(), settings)).toEqual({
      ip: '10.0.0.1',
      method: 'GET',
      route: '/search',
      auth: 'anonymous',
    });
  });

  it('prefers the route template when the framework knows it', () => {
    expect(buildDescriptors(facts({ route: '/users/:id', url: '/users/42' }), settings).route).toBe(
      '/users/:id',
    );
  });

  it('reads the API key from x-api-key (first value) and sets auth', () => {
    const descriptors = buildDescriptors(facts({}, { 'x-api-key': ['k1', 'k2'] }), settings);
    expect(descriptors).toMatchObject({ api_key: 'k1', auth: 'api_key' });
  });

  it('takes the API key from another header or from code', () => {
    const other = { ...settings, apiKeyHeader: 'authorization-key' };
    expect(buildDescriptors(facts({}, { 'authorization-key': 'k9' }), other).api_key).toBe('k9');
    expect(
      buildDescriptors(facts({}, { 'x-api-key': 'k1' }), settings, { apiKey: 'from-code' }).api_key,
    ).toBe('from-code');
    expect(buildDescriptors(facts({}, { 'x-api-key': 'k1' }), settings, { apiKey: undefined }).auth).toBe(
      'anonymous',
    );
  });

  it('merges the app descriptors, which win, and stringifies numbers', () => {
    const descriptors = buildDescriptors(facts({}, { 'x-api-key': 'k1' }), settings, {
      descriptors: { tenant: 'acme', plan: 3, auth: 'jwt', ip: undefined, bad: { nested: true } },
    });
    expect(descriptors).toEqual({
      method: 'GET',
      route: '/search',
      api_key: 'k1',
      tenant: 'acme',
      plan: '3',
      auth: 'jwt',
    });
  });

  it('lets an app unset a built-in, keeps a built-in against an unusable value, and defaults an unset auth', () => {
    const built = buildDescriptors(facts({}, { 'x-api-key': 'k1' }), settings, {
      descriptors: { method: null, route: '', api_key: { nested: 1 }, auth: null },
    });
    expect(built.method).toBeUndefined();
    expect(Object.keys(built)).not.toContain('method');
    expect(built.route).toBe('/search');
    expect(built.api_key).toBe('k1');
    expect(built.auth).toBe('api_key');
  });

  it('ignores app descriptors that are not an object', () => {
    expect(buildDescriptors(facts(), settings, { descriptors: 'nope' }).auth).toBe('anonymous');
  });

  it('hashes overlong values instead of failing', () => {
    const long = 'k'.repeat(10_000);
    const descriptors = buildDescriptors(facts({}, { 'x-api-key': long }), settings);
    expect(descriptors.api_key).toMatch(/^#[\w-]{22}$/);
    expect(buildDescriptors(facts({}, { 'x-api-key': long }), settings).api_key).toBe(descriptors.api_key);
    expect(descriptors.auth).toBe('api_key');
  });

  it('adds client_ip, the whole address, only when the rules read it', () => {
    const v6 = facts({ ip: '[2001:DB8:0:1::42]:443' });
    expect(buildDescriptors(v6, settings).client_ip).toBeUndefined();
    const built = buildDescriptors(v6, settings, undefined, new Set(['client_ip']));
    expect(built).toMatchObject({ ip: '2001:db8:0:1::/64', client_ip: '2001:db8:0:1::42' });
    expect(buildDescriptors(facts(), settings, undefined, new Set(['client_ip'])).client_ip).toBe('10.0.0.1');
    expect(
      buildDescriptors(facts({ ip: undefined }), settings, undefined, new Set(['client_ip'])),
    ).not.toHaveProperty('client_ip');
  });

  it('reads retry and retry_attempt from the retry header when the rules read them', () => {
    const used = new Set(['retry', 'retry_attempt']);
    const of = (headers: Record<string, string>, other = settings) =>
      buildDescriptors(facts({}, headers), other, undefined, used);
    expect(of({})).toMatchObject({ retry: 'false' });
    expect(of({})).not.toHaveProperty('retry_attempt');
    expect(of({ 'retry-attempt': '0' }).retry).toBe('false');
    expect(of({ 'retry-attempt': '2' })).toMatchObject({ retry: 'true', retry_attempt: '2' });
    expect(of({ 'retry-attempt': '02' }).retry_attempt).toBe('2');
    expect(of({ 'retry-attempt': 'soon' })).toMatchObject({ retry: 'true' });
    expect(of({ 'retry-attempt': 'soon' })).not.toHaveProperty('retry_attempt');
    expect(of({ 'x-retry': '1' }, { ...settings, retryHeader: 'x-retry' }).retry_attempt).toBe('1');
    expect(buildDescriptors(facts({}, { 'retry-attempt': '1' }), settings)).not.toHaveProperty('retry');
  });
});

describe('buildDescriptors with onlyUsed', () => {
  it('builds only the built-ins the rules read, the app descriptors always', () => {
    const headers = { 'x-api-key': 'k1', 'idempotency-key': 'order-7' };
    expect(buildDescriptors(facts({}, headers), settings, undefined, new Set(['ip']), true)).toEqual({
      ip: '10.0.0.1',
    });
    expect(buildDescriptors(facts({}, headers), settings, undefined, new Set(['auth']), true)).toEqual({
      api_key: 'k1',
      auth: 'api_key',
    });
    const own = { descriptors: { tenant: 'acme' } };
    expect(buildDescriptors(facts(), settings, own, new Set(['route', 'method']), true)).toEqual({
      method: 'GET',
      route: '/search',
      tenant: 'acme',
    });
    const idempotent = buildDescriptors(
      facts({}, headers),
      settings,
      undefined,
      new Set(['idempotency_key']),
      true,
    );
    expect(Object.keys(idempotent)).toEqual(['idempotency_key']);
    expect(idempotent.idempotency_key).not.toContain('order-7');
  });

  it('reads the address of a request with an API key only when a rule other than the anonymous ones reads it', () => {
    const userStyle = usedDescriptors(
      compileRules({
        rules: [
          { name: 'anon', match: { auth: 'anonymous' }, key: ['ip'], limit: { requests: 1, per: '1s' } },
          { name: 'keyed', match: { auth: 'api_key' }, key: ['api_key'], limit: { requests: 1, per: '1s' } },
        ],
      }),
    );
    let reads = 0;
    const counted = (headers: Record<string, string>) => ({
      ...facts({}, headers),
      get ip() {
        reads++;
        return '::ffff:10.0.0.1';
      },
    });
    const keyed = buildDescriptors(counted({ 'x-api-key': 'k1' }), settings, undefined, userStyle, true);
    expect(keyed).toEqual({ api_key: 'k1', auth: 'api_key' });
    expect(reads).toBe(0);
    const anonymous = buildDescriptors(counted({}), settings, undefined, userStyle, true);
    expect(anonymous).toEqual({ auth: 'anonymous', ip: '10.0.0.1' });
    expect(reads).toBe(1);
    // The app marks a keyed request anonymous: its address counts again.
    const marked = { descriptors: { auth: 'anonymous' } };
    expect(buildDescriptors(counted({ 'x-api-key': 'k1' }), settings, marked, userStyle, true).ip).toBe(
      '10.0.0.1',
    );
    // The app's own `ip` wins, as it does when the address is read first.
    const own = { descriptors: { ip: '192.0.2.9' } };
    expect(buildDescriptors(counted({}), settings, own, userStyle, true).ip).toBe('192.0.2.9');

    const everyone = usedDescriptors(
      compileRules({
        rules: [
          { name: 'anon', match: { auth: 'anonymous' }, key: ['ip'], limit: { requests: 1, per: '1s' } },
          { name: 'all', key: ['ip'], limit: { requests: 1, per: '1s' } },
        ],
      }),
    );
    expect(buildDescriptors(counted({ 'x-api-key': 'k1' }), settings, undefined, everyone, true).ip).toBe(
      '10.0.0.1',
    );
  });

  it('builds every built-in without it', () => {
    expect(Object.keys(buildDescriptors(facts(), settings, undefined, new Set(['ip'])))).toEqual([
      'ip',
      'method',
      'route',
      'auth',
    ]);
  });
});

describe('retryAttempt', () => {
  it('is 0 for a first attempt, the number for a retry, undefined for a retry of unknown number', () => {
    expect(retryAttempt(undefined)).toBe(0);
    expect(retryAttempt(' ')).toBe(0);
    expect(retryAttempt(['3', '4'])).toBe(3);
    expect(retryAttempt('-1')).toBeUndefined();
    expect(retryAttempt('1234567')).toBeUndefined();
  });
});

describe('buildDescriptors with addressDescriptors', () => {
  function source() {
    const asked: string[] = [];
    const addressDescriptors = {
      names: ['asn', 'country'],
      describe: (address: string) => {
        asked.push(address);
        return { asn: 'AS64500', country: 'DE', extra: 'ignored' };
      },
    };
    return { asked, settings: { ...settings, addressDescriptors } };
  }

  it('asks the source with the whole client address when a rule reads one of its names', () => {
    const { asked, settings: withSource } = source();
    const built = buildDescriptors(
      facts({ ip: '2001:db8::1:2' }),
      withSource,
      undefined,
      new Set(['asn']),
      true,
    );
    expect(built).toEqual({ asn: 'AS64500', country: 'DE' });
    expect(asked).toEqual(['2001:db8::1:2']);
  });

  it('never asks when the rules read none of its names', () => {
    const { asked, settings: withSource } = source();
    expect(buildDescriptors(facts(), withSource, undefined, new Set(['ip']), false)).not.toHaveProperty(
      'asn',
    );
    expect(asked).toEqual([]);
  });
});
