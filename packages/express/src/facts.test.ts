import { describe, expect, it } from 'vitest';
import { ExpressFacts, type ExpressRequestFields, expressTrust } from './facts.js';

describe('expressTrust', () => {
  it("reads Express's 'trust proxy' as settingTrust does, a hop count of 0 as bounded", () => {
    expect([false, undefined].map(expressTrust)).toEqual(['none', 'none']);
    expect(expressTrust(true)).toBe('all');
    expect([0, 1, 'loopback', ['10.0.0.0/8'], () => true].map(expressTrust)).toEqual(
      Array(5).fill('bounded'),
    );
  });
});

describe('ExpressFacts', () => {
  const request = (route?: { path?: unknown }): ExpressRequestFields => ({
    method: 'GET',
    originalUrl: '/api/users/7?x=1',
    baseUrl: '/api',
    ...(route === undefined ? {} : { route }),
    headers: { 'x-api-key': 'k' },
    app: { enabled: (setting) => setting === 'case sensitive routing', get: () => 1 },
    socket: { remoteAddress: '192.0.2.1' },
  });

  it('takes the route found before routing, else the one routed to, else none', () => {
    expect(new ExpressFacts(request(), '/api/users/:id').route).toBe('/api/users/:id');
    expect(new ExpressFacts(request({ path: '/users/:id' })).route).toBe('/api/users/:id');
    expect(new ExpressFacts(request({ path: /re/ })).route).toBeUndefined();
  });

  it('reads the address, target, headers, case sensitivity and proxy trust off the request', () => {
    const facts = new ExpressFacts(request());
    expect([facts.ip, facts.method, facts.url, facts.caseSensitive]).toEqual([
      '192.0.2.1',
      'GET',
      '/api/users/7?x=1',
      true,
    ]);
    expect(facts.header('x-api-key')).toBe('k');
    expect(facts.proxyTrust).toBe('bounded');
  });

  it("takes req.ip when the app trusts proxies, the socket's address (what req.ip is then) when it does not", () => {
    const trusting = { ...request(), ip: '203.0.113.9' };
    expect(new ExpressFacts(trusting).ip).toBe('203.0.113.9');
    const untrusting = { ...trusting, app: { enabled: () => false, get: () => false } };
    expect(new ExpressFacts(untrusting).ip).toBe('192.0.2.1');
    expect(new ExpressFacts(untrusting).proxyTrust).toBe('none');
  });
});
