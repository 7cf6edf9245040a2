import { describe, expect, it } from 'vitest';
import { FastifyFacts, type FastifyRequestFields, fastifyTrust } from './facts.js';

const options = Symbol('fastify.options');

function request(overrides: Partial<FastifyRequestFields> = {}): FastifyRequestFields {
  return {
    ip: '203.0.113.7',
    method: 'GET',
    url: '/users/7?full=1',
    headers: { 'x-api-key': 'k1' },
    socket: { remoteAddress: '203.0.113.7' },
    ...overrides,
  };
}

describe('FastifyFacts', () => {
  it('reads the request as Fastify gives it, the route as the adapter found it', () => {
    const facts = new FastifyFacts(request(), '/users/:id', 'none');
    expect([facts.ip, facts.method, facts.url, facts.route]).toEqual([
      '203.0.113.7',
      'GET',
      '/users/7?full=1',
      '/users/:id',
    ]);
    expect(facts.header('x-api-key')).toBe('k1');
    expect(facts.proxyTrust).toBe('none');
  });

  it("reads trustProxy off the request's Fastify instance when the adapter had none (NestJS)", () => {
    const root = { [options]: { trustProxy: true } };
    const facts = new FastifyFacts(request({ server: Object.create(root) }), '/');
    expect(facts.proxyTrust).toBe('all');
  });

  it('tells an ignored X-Forwarded-For when the setting cannot be read', () => {
    const forwarded = request({ headers: { 'x-forwarded-for': '198.51.100.1' } });
    expect(new FastifyFacts(forwarded, '/').proxyTrust).toBe('none');
    const moved = request({ headers: { 'x-forwarded-for': '198.51.100.1' }, ip: '198.51.100.1' });
    expect(new FastifyFacts(moved, '/').proxyTrust).toBeUndefined();
  });
});

describe('fastifyTrust', () => {
  it('reads the options a Fastify instance keeps under its symbol, through the prototype chain', () => {
    const options = Symbol('fastify.options');
    const root = { [options]: { trustProxy: true } };
    expect(fastifyTrust(Object.create(root))).toBe('all');
    expect(fastifyTrust({ [options]: { trustProxy: 2 } })).toBe('bounded');
    expect(fastifyTrust({ [options]: {} })).toBe('none');
    expect(fastifyTrust({})).toBeUndefined();
  });
});
