import { describe, expect, it } from 'vitest';
import { buildDescriptors, type DescriptorSettings, type RequestFacts } from './descriptors.js';

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
});
