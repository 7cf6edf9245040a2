import { describe, expect, it } from 'vitest';
import { RulesError } from '../base/errors.js';
import { createHttpLimiter } from './flow.js';
import { ALL_RULES } from './notes.js';
import type { AdapterStage } from './options.js';
import { RouteScopes } from './routeScopes.js';

const rules = { rules: [{ name: 'per_ip', key: ['ip'], limit: { requests: 5, per: '1m' } }] };

function scopes() {
  const http = createHttpLimiter({ rules, logger: { warn: () => {} } });
  const reported: { error: unknown; stage: AdapterStage }[] = [];
  const cache = new RouteScopes(
    {
      compileRouteConfig: http.compileRouteConfig,
      report: (error, stage) => reported.push({ error, stage }),
    },
    (method, url = '') => ({ label: `route ${method} ${url}`, rule: `${method.toLowerCase()}_route` }),
  );
  return { cache, reported };
}

describe('RouteScopes', () => {
  it('compiles a config once: a config shared by two routes shares its rules (and counters)', () => {
    const { cache } = scopes();
    const config = { limit: 2, per: '1m' };
    const get = cache.compile(config, 'GET', '/search');
    expect(get.rules?.rules.map((rule) => rule.name)).toEqual(['get_route']);
    expect(cache.compile(config, 'HEAD', '/search')).toBe(get);
    expect(cache.scopeOf(config, 'GET', '/search')).toBe(get);
  });

  it('throws at registration naming the route when a config is wrong', () => {
    const { cache } = scopes();
    const bad = { rules: [{ name: 'burst', key: ['ip'], limit: { requests: 1, per: '60x' } }] };
    expect(() => cache.compile(bad, 'POST', '/upload')).toThrow(RulesError);
    expect(() => cache.compile(bad, 'POST', '/upload')).toThrow(/route POST \/upload/);
  });

  it('compiles on the first request a route not seen at registration; a wrong one is reported once and left to the global rules', () => {
    const { cache, reported } = scopes();
    const late = { limit: 1, per: '1m', name: 'late' };
    expect(cache.scopeOf(late, 'GET', '/late').rules?.rules.map((rule) => rule.name)).toEqual(['late']);
    const bad = { rules: [{ name: 'burst', key: ['ip'], limit: { requests: 1, per: '60x' } }] };
    expect(cache.scopeOf(bad, 'GET', '/bad')).toBe(ALL_RULES);
    expect(cache.scopeOf(bad, 'GET', '/bad')).toBe(ALL_RULES);
    expect(reported.map(({ stage }) => stage)).toEqual(['check']);
    expect(reported[0]?.error).toBeInstanceOf(RulesError);
  });
});
