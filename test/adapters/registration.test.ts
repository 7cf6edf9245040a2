import { ConfigError, type RuleSpec, RulesError } from '@sluice/core';
import { rateLimit as expressRateLimit } from '@sluice/express';
import { rateLimit as fastifyRateLimit } from '@sluice/fastify';
import { rateLimit as koaRateLimit } from '@sluice/koa';
import Fastify from 'fastify';
import request from 'supertest';
import { describe, expect, it } from 'vitest';

// Framework-specific registration: each adapter's way of declaring route rules fails when the route is
// declared, never on a request. The behaviour of requests is in contract.test.ts, the same for all three.

const global = {
  domain: 'test',
  rules: [{ name: 'per_ip', key: ['ip'], limit: { requests: 1, per: '60s' } }],
};
const badRule = { name: 'burst', key: ['ip'], limit: { requests: 1, per: '60x' } } as RuleSpec;

describe('Fastify route config', () => {
  async function appWith(config: object) {
    const app = Fastify();
    await app.register(fastifyRateLimit, { rules: global });
    app.get('/open', { config }, async () => ({ ok: true }));
    return app;
  }

  it('limits routes declared right after a register that was not awaited, their own rules included', async () => {
    const app = Fastify();
    const warnings: string[] = [];
    const generous = { rules: [{ name: 'per_ip', key: ['ip'], limit: { requests: 100, per: '60s' } }] };
    app.register(fastifyRateLimit, { rules: generous, logger: { warn: (line) => warnings.push(line) } });
    const burst = { name: 'early_burst', key: ['ip'], limit: { requests: 1, per: '60s' } };
    app.get('/early', { config: { rateLimit: { rules: [burst] } } }, async () => ({ ok: true }));
    app.get('/broken', { config: { rateLimit: { rules: [badRule] } } }, async () => ({ ok: true }));
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    // onRoute never saw these routes: their rules are compiled on their first request.
    const first = await request(url).get('/early').expect(200);
    expect(first.headers.ratelimit).toMatch(/^"early_burst";r=0;/);
    const denied = await request(url).get('/early').expect(429);
    expect(denied.headers['x-ratelimit-rule']).toBe('early_burst');
    // A broken config can no longer fail at start-up: it is reported, and the global rules still apply.
    const broken = await request(url).get('/broken').expect(200);
    // 98: the denied request above counted nowhere (a denial commits no rule of its call).
    expect(broken.headers.ratelimit).toMatch(/^"per_ip";r=98;/);
    expect(warnings.join('\n')).toMatch(
      /route GET \/broken.*limit\.per: `limit\.per` must be a duration .*, got "60x"/s,
    );
    await app.close();
  });

  it('turns limiting off for a route with rateLimit: false', async () => {
    const app = await appWith({ rateLimit: false });
    for (let i = 0; i < 3; i++) expect((await app.inject('/open')).statusCode).toBe(200);
    await app.close();
  });

  it('throws when the route registers with a rateLimit of the wrong type', async () => {
    await expect(appWith({ rateLimit: 5 })).rejects.toThrow(ConfigError);
    await expect(appWith({ rateLimit: { rules: [] } })).rejects.toThrow(/non-empty array/);
  });

  it('throws when the route registers with a wrong shorthand, naming the route and the field', async () => {
    await expect(appWith({ rateLimit: { limit: 5 } })).rejects.toThrow(/route GET \/open: .*per: /);
    await expect(appWith({ rateLimit: { limit: 5, per: '5 minutes' } })).rejects.toThrow(
      /route GET \/open: .*per: must be a duration/,
    );
    await expect(appWith({ rateLimit: { limit: 5, per: '1m', windowMs: 1 } })).rejects.toThrow(
      /unknown field "windowMs"/,
    );
  });

  it('suggests what a misspelled route config meant, at start-up', async () => {
    await expect(appWith({ rateLimt: { limit: 5, per: '1m' } })).rejects.toThrow(
      'route GET /open: config key "rateLimt" (did you mean "rateLimit"?)',
    );
    await expect(appWith({ rateLimit: { limt: 5, per: '1m' } })).rejects.toThrow(
      /limit: must be a whole number of at least 1; unknown field "limt" \(did you mean "limit"\?\)/,
    );
    await expect(appWith({ rateLimit: { limit: 5, per: '1m', afterBdy: true } })).rejects.toThrow(
      'unknown field "afterBdy" (did you mean "afterBody"?)',
    );
    await expect(appWith({ rateLimit: { limit: 0, per: '1m' } })).rejects.toThrow(
      'limit: must be a whole number of at least 1',
    );
    // Keys of the app's own, far from rateLimit, are left alone.
    const app = await appWith({ owner: 'search-team', rateLimit: { limit: 5, per: '1m' } });
    expect((await app.inject('/open')).statusCode).toBe(200);
    await app.close();
  });

  it('refuses a second register in one context with a Sluice message', async () => {
    const app = Fastify();
    await app.register(fastifyRateLimit, { rules: global });
    await expect(app.register(fastifyRateLimit, { rules: global })).rejects.toThrow(
      /@sluice\/fastify is registered twice in this context/,
    );
    await app.close();
  });

  it('names the route in the problems of its rules', async () => {
    const failure = appWith({ rateLimit: { rules: [badRule] } });
    await expect(failure).rejects.toThrow(RulesError);
    await expect(failure).rejects.toThrow(
      /route GET \/open.*limit\.per: `limit\.per` must be a duration .*, got "60x"/s,
    );
  });

  it('refuses a route rule named like a global rule: they would share counters', async () => {
    const clash = { name: 'per_ip', key: ['ip'], limit: { requests: 5, per: '1s' } } satisfies RuleSpec;
    await expect(appWith({ rateLimit: { rules: [clash] } })).rejects.toThrow(/already used by a global rule/);
  });

  it('refuses one rule name on two routes, and compiles a GET route and its HEAD twin once', async () => {
    const app = Fastify();
    await app.register(fastifyRateLimit, { rules: global });
    const burst = { name: 'burst', key: ['ip'], limit: { requests: 5, per: '1s' } } satisfies RuleSpec;
    app.get('/a', { config: { rateLimit: { rules: [burst] } } }, async () => ({ ok: true }));
    expect(() => app.get('/b', { config: { rateLimit: { rules: [burst] } } }, async () => ({}))).toThrow(
      /route GET \/b: rule name "burst" is already used by route GET \/a/,
    );
    await app.close();
  });

  it('rejects Fastify-foreign options, naming them', async () => {
    const app = Fastify();
    await expect(
      app.register(fastifyRateLimit, { rules: global, timeWindow: 5000 } as never),
    ).rejects.toThrow(
      /unknown option "timeWindow" \(did you mean "per"\?, as in \{limit: 100, per: '1m'\}\)/,
    );
  });
});

describe.each([
  ['express', () => expressRateLimit({ rules: global })],
  ['koa', () => koaRateLimit({ rules: global })],
])('%s limiter.route()', (_name, create) => {
  it('throws at declaration for invalid rules, naming them', () => {
    expect(() => create().route(badRule)).toThrow(
      /limiter\.route\(burst\).*limit\.per: `limit\.per` must be a duration .*, got "60x"/s,
    );
  });

  it('refuses one rule name in two limiter.route() calls, and lets one middleware serve two routes', () => {
    const limiter = create();
    const burst = { name: 'burst', key: ['ip'], limit: { requests: 5, per: '1s' } } satisfies RuleSpec;
    limiter.route(burst);
    expect(() => limiter.route(burst)).toThrow(
      /rule name "burst" is already used by limiter\.route\(burst\)/,
    );
  });

  it('throws at declaration for a wrong shorthand', () => {
    expect(() => create().route({ limit: 0, per: '1m' })).toThrow(/limiter\.route\(\{limit: 0.*limit: /);
    expect(() => create().route({ limit: 5, per: 'soon' })).toThrow(/per: must be a duration/);
  });

  it('refuses a rule named like a global rule', () => {
    expect(() => create().route({ name: 'per_ip', key: ['ip'], limit: { requests: 5, per: '1s' } })).toThrow(
      /already used by a global rule/,
    );
  });
});
