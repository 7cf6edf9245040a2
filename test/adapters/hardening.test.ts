import { ConfigError, type Decision, MemoryStore } from '@sluice/core';
import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type AdapterFactory,
  type AnyRequest,
  type AppSpec,
  adapters,
  itUnlessSkipped,
  type RunningApp,
} from './apps.js';
import { perIp, rules, T0 } from './fixtures.js';

// Issue 10, "HTTP and identity" and "Config": each behaviour through real HTTP on all three adapters.

/** The anonymous per-IP rule and the per-key rule of the README's example. */
const anonymousAndKeyed = rules(
  { name: 'anon_per_ip', match: { auth: 'anonymous' }, key: ['ip'], limit: { requests: 2, per: '60s' } },
  { name: 'key_default', match: { auth: 'api_key' }, key: ['api_key'], limit: { requests: 100, per: '60s' } },
);

/** Warnings whose text ends with a notice code, by code. */
function notices(warn: ReturnType<typeof vi.fn>): string[] {
  return warn.mock.calls.map((call) => String(call[0]).match(/\[([A-Z0-9_]+)\]$/)?.[1] ?? '').filter(Boolean);
}

describe.each(adapters.map((adapter) => [adapter.name, adapter] as const))(
  'adapter hardening: %s',
  (_name, adapter: AdapterFactory) => {
    let running: RunningApp | undefined;
    const warn = vi.fn();

    afterEach(async () => {
      await running?.close();
      running = undefined;
      warn.mockReset();
    });

    async function start(spec: Partial<AppSpec> & { options: AppSpec['options'] }): Promise<RunningApp> {
      running = await adapter.start({
        ...spec,
        options: { clock: () => T0, logger: { warn }, ...spec.options },
      });
      return running;
    }

    it('warns once, with a code, when the app trusts every proxy', async () => {
      const app = await start({ trustProxy: true, options: { rules: rules(perIp(10)) } });
      for (let i = 0; i < 3; i++)
        await request(app.url).get('/search').set('x-forwarded-for', '198.51.100.1').expect(200);
      expect(notices(warn)).toEqual(['SLUICE_TRUST_ALL_PROXIES']);
    });

    it('refuses an ipv6Subnet outside 32-64 at start, naming the range', async () => {
      for (const ipv6Subnet of [16, 31, 65, 128]) {
        const failure = start({ options: { rules: rules(perIp(1)), ipv6Subnet } });
        await expect(failure).rejects.toThrow(ConfigError);
        await expect(failure).rejects.toThrow(/option "ipv6Subnet": must be a prefix length from 32 to 64/);
      }
    });

    it('keys IPv6 clients by the ipv6Subnet given', async () => {
      const app = await start({ trustProxy: true, options: { rules: rules(perIp(1)), ipv6Subnet: 48 } });
      const from = (ip: string) => request(app.url).get('/search').set('x-forwarded-for', ip);
      await from('2001:db8:1:2::1').expect(200);
      await from('2001:db8:1:3::1').expect(429); // another /64 of the same /48
      await from('2001:db8:2::1').expect(200);
    });

    it('warns once, naming the descriptor, when descriptors(req) keys by a raw IPv6 address', async () => {
      const client = (req: AnyRequest) => ({ client: req.headers['x-client'] as string | undefined });
      const app = await start({
        options: {
          descriptors: client,
          rules: rules({ name: 'per_client', key: ['client'], limit: { requests: 10, per: '60s' } }),
        },
      });
      await request(app.url).get('/search').set('x-client', '198.51.100.7').expect(200);
      expect(notices(warn)).toEqual([]);
      for (const ip of ['2001:db8::1', '2001:db8::2'])
        await request(app.url).get('/search').set('x-client', ip).expect(200);
      expect(notices(warn)).toEqual(['SLUICE_RAW_IPV6_KEY']);
      expect(String(warn.mock.calls[0]?.[0])).toMatch(/descriptor "client".*normalizeIp/);
      expect(String(warn.mock.calls[0]?.[0])).not.toContain('2001:db8');
    });

    describe('API keys', () => {
      const randomKey = () => `k_${Math.random().toString(36).slice(2)}`;

      it('without validation: random keys escape the per-IP rule, and a warning says so once', async () => {
        const app = await start({ options: { rules: anonymousAndKeyed } });
        for (let i = 0; i < 4; i++)
          await request(app.url).get('/search').set('x-api-key', randomKey()).expect(200);
        expect(notices(warn)).toEqual(['SLUICE_UNVALIDATED_API_KEY']);
        expect(String(warn.mock.calls[0]?.[0])).toMatch(
          /rule "key_default" is keyed by api_key.*validateApiKey/,
        );
      });

      it('with validateApiKey: a refused key is anonymous and the per-IP rule applies', async () => {
        const known = new Set(['k_good']);
        const seen: string[] = [];
        const app = await start({
          options: {
            rules: anonymousAndKeyed,
            validateApiKey: async (key: string, req: AnyRequest) => {
              seen.push(req.url);
              return known.has(key);
            },
          },
        });
        await request(app.url).get('/search').set('x-api-key', randomKey()).expect(200);
        await request(app.url).get('/search').set('x-api-key', randomKey()).expect(200);
        const denied = await request(app.url).get('/search').set('x-api-key', randomKey()).expect(429);
        expect(denied.headers['x-ratelimit-rule']).toBe('anon_per_ip');
        await request(app.url).get('/search').expect(429); // no key at all: the same anonymous client
        // A valid key is counted by its own rule, however spent the client's IP is.
        const good = await request(app.url).get('/search').set('x-api-key', 'k_good').expect(200);
        expect(good.headers.ratelimit).toMatch(/^"key_default";r=99;/);
        expect(seen).toEqual(['/search', '/search', '/search', '/search']); // not called without a key
        expect(notices(warn)).toEqual([]);
      });

      it('asks validateApiKey once per request, global and route rules together', async () => {
        let calls = 0;
        const app = await start({
          options: {
            rules: anonymousAndKeyed,
            validateApiKey: (key: string) => {
              calls += 1;
              return key === 'k_good';
            },
          },
          routeRule: { name: 'limited_per_key', key: ['api_key'], limit: { requests: 1, per: '60s' } },
        });
        await request(app.url).get('/limited').set('x-api-key', 'k_good').expect(200);
        expect(calls).toBe(1);
        const denied = await request(app.url).get('/limited').set('x-api-key', 'k_good').expect(429);
        expect(denied.headers['x-ratelimit-rule']).toBe('limited_per_key');
        expect(calls).toBe(2);
      });

      it('treats a key as refused when validateApiKey throws, and reports it once', async () => {
        const app = await start({
          options: {
            rules: anonymousAndKeyed,
            validateApiKey: () => {
              throw new Error('key service down');
            },
          },
        });
        await request(app.url).get('/search').set('x-api-key', 'k_any').expect(200);
        await request(app.url).get('/search').set('x-api-key', 'k_any').expect(200);
        await request(app.url).get('/search').set('x-api-key', 'k_any').expect(429);
        expect(warn).toHaveBeenCalledTimes(1);
        expect(String(warn.mock.calls[0]?.[0])).toMatch(/validate_api_key failed \(key service down\)/);
      });
    });

    it('gives the global rules the route template on every adapter, with no notice', async () => {
      const app = await start({
        options: {
          rules: rules(
            {
              name: 'user_reads',
              match: { route: '/users/:id' },
              key: ['ip'],
              limit: { requests: 1, per: '60s' },
            },
            { name: 'per_ip_route', key: ['ip', 'route'], limit: { requests: 100, per: '60s' } },
          ),
        },
      });
      await request(app.url).get('/users/7').expect(200);
      const second = request(app.url).get('/users/7');
      // Fastify's hook and Nest's guard run after routing; Express, Koa and Hono look the route up.
      expect((await second.expect(429)).headers['x-ratelimit-rule']).toBe('user_reads');
      expect(notices(warn)).toEqual([]);
    });

    it('leaves alone a response an earlier middleware already sent', async () => {
      const errors: unknown[] = [];
      const app = await start({ sendsFirst: '/search', errors, options: { rules: rules(perIp(1)) } });
      for (let i = 0; i < 3; i++) {
        const response = await request(app.url).get('/search').expect(200);
        expect(response.body).toEqual({ early: true });
      }
      expect(errors).toEqual([]);
    });

    it('takes the limiter notice codes in silence, and sends limiter notices to its logger', async () => {
      const store = new MemoryStore();
      const first = await adapter.start({
        options: { store, rules: rules(perIp(5)), logger: { warn: () => {} } },
      });
      try {
        await start({ options: { store, rules: rules(perIp(5)) } });
        expect(notices(warn)).toEqual(['SLUICE_STORE_SHARED']);
        await running?.close();
        warn.mockReset();
        await start({ options: { store, rules: rules(perIp(5)), silence: ['SLUICE_STORE_SHARED'] } });
        expect(notices(warn)).toEqual([]);
      } finally {
        await first.close();
      }
    });

    it('silences an adapter notice by its code', async () => {
      const app = await start({
        options: { rules: anonymousAndKeyed, silence: ['SLUICE_UNVALIDATED_API_KEY'] },
      });
      await request(app.url).get('/search').set('x-api-key', 'k_any').expect(200);
      expect(warn).not.toHaveBeenCalled();
    });

    it('says "did you forget await?" for rules given as a promise', async () => {
      const pending = Promise.resolve(rules(perIp(1)));
      await expect(start({ options: { rules: pending as never } })).rejects.toThrow(
        /rules is a Promise: did you forget await\?/,
      );
    });

    itUnlessSkipped(adapter, 'onDeniedOption')(
      'sends the default 429 when onDenied sets no response',
      async () => {
        const heard: (string | null)[] = [];
        const onDenied = (..._args: unknown[]) => {
          heard.push((_args.at(-1) as { body: { rule: string | null } }).body.rule);
        };
        const options = {
          rules: rules(perIp(1, { algorithm: 'sliding_log' })),
          onDenied,
        } as AppSpec['options'];
        const app = await start({ options });
        await request(app.url).get('/search').expect(200);
        const denied = await request(app.url).get('/search').expect(429);
        expect(denied.headers['retry-after']).toBe('60');
        expect(denied.body).toMatchObject({ error: 'rate_limited', rule: 'per_ip' });
        expect(heard).toEqual(['per_ip']);
      },
    );

    describe('the inline shorthand', () => {
      it('{limit, per} is one per-IP rule, with no default-rules notice', async () => {
        const app = await start({ options: { limit: 2, per: '1m' } });
        await request(app.url).get('/search').expect(200);
        const second = await request(app.url).get('/search').expect(200);
        expect(second.headers['ratelimit-policy']).toBe('"per_ip";q=2;w=60');
        expect((await request(app.url).get('/search').expect(429)).headers['x-ratelimit-rule']).toBe(
          'per_ip',
        );
        // Ordinary rules: explain shows them.
        expect(app.limiter.explain({ ip: '203.0.113.9' }).rules).toMatchObject([
          { rule: 'per_ip', key: ['ip'] },
        ]);
        expect(warn).not.toHaveBeenCalled();
      });

      it("{limit, per, key: 'api_key'} counts each key, and requests without one per IP", async () => {
        const app = await start({
          options: { limit: 2, per: '1m', key: 'api_key', validateApiKey: () => true },
        });
        const withKey = (key: string) => request(app.url).get('/search').set('x-api-key', key);
        await withKey('k_a').expect(200);
        await withKey('k_a').expect(200);
        expect((await withKey('k_a').expect(429)).headers['x-ratelimit-rule']).toBe('per_api_key');
        await withKey('k_b').expect(200);
        await request(app.url).get('/search').expect(200);
        await request(app.url).get('/search').expect(200);
        const anonymous = await request(app.url).get('/search').expect(429);
        expect(anonymous.headers['x-ratelimit-rule']).toBe('per_api_key_anonymous');
      });

      it('on a route: {limit, per} limits that route only', async () => {
        const app = await start({
          options: { rules: rules(perIp(100)) },
          routeRule: { limit: 1, per: '1m' },
        });
        await request(app.url).get('/limited').expect(200);
        const denied = await request(app.url).get('/limited').expect(429);
        // Fastify names the rule after the route, Nest after the handler; limiter.route() knows no path: by
        // declaration order.
        expect(denied.headers['x-ratelimit-rule']).toBe(adapter.traits.routeShorthandName);
        await request(app.url).get('/search').expect(200);
      });

      it('is refused when half given, beside rules, or with a duration that is not one', async () => {
        await expect(start({ options: { limit: 5 } })).rejects.toThrow(
          /option "per": the shorthand needs a window/,
        );
        await expect(start({ options: { per: '1m' } })).rejects.toThrow(
          /option "limit": the shorthand needs a limit/,
        );
        await expect(start({ options: { rules: rules(perIp(1)), limit: 5, per: '1m' } })).rejects.toThrow(
          /option "rules": give rules or the shorthand/,
        );
        await expect(start({ options: { limit: 5, per: '5 minutes' } })).rejects.toThrow(
          /option "per": must be a duration/,
        );
        await expect(start({ options: { windowMs: 60_000, max: 5 } as never })).rejects.toThrow(
          /unknown option "windowMs" \(did you mean "per"\?.*unknown option "max" \(did you mean "limit"\?/,
        );
      });
    });

    it('refuses an unknown option with a did-you-mean', async () => {
      await expect(start({ options: { rules: rules(perIp(1)), timeoutMS: 50 } as never })).rejects.toThrow(
        /unknown option "timeoutMS" \(did you mean "timeoutMs"\?\)/,
      );
      await expect(start({ options: { rules: rules(perIp(1)), skp: () => false } as never })).rejects.toThrow(
        /unknown option "skp" \(did you mean "skip"\?\)/,
      );
    });

    it('with dryRun, counts and reports every rule but denies nothing, and says so at start', async () => {
      const decisions: Decision[] = [];
      const app = await start({
        options: {
          rules: rules(perIp(1)),
          dryRun: true,
          observer: { onDecision: (decision) => void decisions.push(decision) },
        },
      });
      for (let i = 0; i < 3; i++) await request(app.url).get('/search').expect(200);
      expect(decisions.map((decision) => decision.results[0]?.shadowDenied)).toEqual([false, true, true]);
      expect(String(warn.mock.calls[0]?.[0])).toMatch(/dryRun is on/);
    });
  },
);
