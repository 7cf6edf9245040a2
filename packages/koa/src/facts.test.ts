import { describe, expect, it } from 'vitest';
import { type KoaContextFields, KoaFacts } from './facts.js';

function context(overrides: Partial<KoaContextFields> = {}): KoaContextFields {
  return {
    ip: '203.0.113.7',
    method: 'GET',
    originalUrl: '/users/7?full=1',
    app: { proxy: false, maxIpsCount: 0 },
    req: { headers: { 'x-api-key': 'k1' } },
    ...overrides,
  };
}

describe('KoaFacts', () => {
  it('reads the context through its delegates; the route the global middleware found wins', () => {
    const facts = new KoaFacts(context({ _matchedRoute: '/users/:id' }), '/users/:userId');
    expect([facts.ip, facts.method, facts.url, facts.route]).toEqual([
      '203.0.113.7',
      'GET',
      '/users/7?full=1',
      '/users/:userId',
    ]);
    expect(facts.header('x-api-key')).toBe('k1');
    expect(new KoaFacts(context({ _matchedRoute: '/users/:id' }), undefined).route).toBe('/users/:id');
    expect(new KoaFacts(context(), undefined).route).toBeUndefined();
  });

  it("tells the app's proxy trust: none, bounded by maxIpsCount, or every hop", () => {
    expect(new KoaFacts(context(), undefined).proxyTrust).toBe('none');
    const bounded = context({ app: { proxy: true, maxIpsCount: 1 } });
    expect(new KoaFacts(bounded, undefined).proxyTrust).toBe('bounded');
    const all = context({ app: { proxy: true, maxIpsCount: 0 } });
    expect(new KoaFacts(all, undefined).proxyTrust).toBe('all');
  });

  it('reads the address only when asked, once', () => {
    let reads = 0;
    const ctx = context();
    const counted = Object.defineProperty({ ...ctx }, 'ip', {
      get: () => {
        reads++;
        return ctx.ip;
      },
    });
    const facts = new KoaFacts(counted, undefined);
    expect(reads).toBe(0);
    expect([facts.ip, facts.ip]).toEqual(['203.0.113.7', '203.0.113.7']);
    expect(reads).toBe(1);
  });
});
