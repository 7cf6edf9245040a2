import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryStore, RulesError } from '@sluice/core';
import type { CheckResult, Store } from '@sluice/core/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEnvoyConfig } from './envoyConfig.js';
import { createRateLimitService, type RateLimitService } from './service.js';
import { d, headers, rlsClient } from './testing/client.js';

const RULES = {
  domain: 'shop',
  rules: [
    { name: 'per_key', match: { auth: 'api_key' }, key: ['api_key'], limit: { requests: 3, per: '60s' } },
    {
      name: 'search_shadow',
      match: { route: '/search' },
      key: [],
      global: true,
      limit: { requests: 1, per: '1s' },
      mode: 'shadow',
    },
  ],
} as const;

function collect() {
  const lines: string[] = [];
  return { lines, warn: (m: string) => lines.push(m), error: (m: string) => lines.push(m) };
}

describe('ShouldRateLimit on MemoryStore, spoken to by a protobufjs client', () => {
  const logger = collect();
  let service: RateLimitService;
  let client: ReturnType<typeof rlsClient>;
  beforeAll(async () => {
    service = await createRateLimitService({ rules: RULES, port: 0, logger });
    client = rlsClient(service.port);
  });
  afterAll(async () => {
    client.close();
    await service.close();
  });

  it('counts a key to its limit, then OVER_LIMIT with the status, limit and headers Envoy reads', async () => {
    const request = { domain: 'shop', descriptors: [d(['auth', 'api_key'], ['api_key', 'k1'])] };
    const first = await client.shouldRateLimit(request);
    expect(first.overall_code).toBe('OK');
    expect(first.statuses).toHaveLength(1);
    expect(first.statuses[0]).toMatchObject({
      code: 'OK',
      limit_remaining: 2,
      current_limit: { requests_per_unit: 3, unit: 'MINUTE', name: 'per_key' },
    });
    expect(headers(first)).toEqual({
      'RateLimit-Policy': '"per_key";q=3;w=60',
      RateLimit: expect.stringMatching(/^"per_key";r=2;t=\d+$/),
    });
    await client.shouldRateLimit(request);
    await client.shouldRateLimit(request);
    const denied = await client.shouldRateLimit(request);
    expect(denied.overall_code).toBe('OVER_LIMIT');
    expect(denied.statuses[0]?.code).toBe('OVER_LIMIT');
    expect(denied.statuses[0]?.limit_remaining).toBe(0);
    expect(Number(denied.statuses[0]?.duration_until_reset?.seconds)).toBeGreaterThan(0);
    const h = headers(denied);
    expect(Number(h['Retry-After'])).toBeGreaterThanOrEqual(1);
    expect(h.RateLimit).toMatch(new RegExp(`^"per_key";r=0;t=${h['Retry-After']}$`));
    expect(service.stats().overLimit).toBe(1);
  });

  it('one status per descriptor, in order; OVER_LIMIT when any one is', async () => {
    const other = d(['auth', 'api_key'], ['api_key', 'k2']);
    const spent = d(['auth', 'api_key'], ['api_key', 'k1']);
    const response = await client.shouldRateLimit({
      domain: 'shop',
      descriptors: [other, spent, d(['x', 'y'])],
    });
    expect(response.statuses.map((s) => s.code)).toEqual(['OK', 'OVER_LIMIT', 'OK']);
    expect(response.statuses[2]?.current_limit).toBeNull();
    expect(response.overall_code).toBe('OVER_LIMIT');
  });

  it('all or nothing: a call with one descriptor over its limit counts none of the others', async () => {
    const fresh = d(['auth', 'api_key'], ['api_key', 'k20']);
    const spent = d(['auth', 'api_key'], ['api_key', 'k21']);
    for (let i = 0; i < 3; i++) await client.shouldRateLimit({ domain: 'shop', descriptors: [spent] });
    const denied = await client.shouldRateLimit({ domain: 'shop', descriptors: [fresh, spent] });
    expect(denied.statuses.map((s) => s.code)).toEqual(['OK', 'OVER_LIMIT']);
    // k20 was not counted by the denied call: 2 left after this first counted one.
    const alone = await client.shouldRateLimit({ domain: 'shop', descriptors: [fresh] });
    expect(alone.statuses[0]?.limit_remaining).toBe(2);
  });

  it("hits_addend is the cost: the request-wide one, and a descriptor's own before it", async () => {
    const a = await client.shouldRateLimit({
      domain: 'shop',
      hits_addend: 2,
      descriptors: [d(['auth', 'api_key'], ['api_key', 'k3'])],
    });
    expect(a.statuses[0]?.limit_remaining).toBe(1);
    const own = { ...d(['auth', 'api_key'], ['api_key', 'k4']), hits_addend: { value: 3 } };
    const b = await client.shouldRateLimit({ domain: 'shop', hits_addend: 1, descriptors: [own] });
    expect(b.statuses[0]?.limit_remaining).toBe(0);
  });

  it('a shadow rule reports but never denies', async () => {
    for (let i = 0; i < 3; i++) {
      const response = await client.shouldRateLimit({
        domain: 'shop',
        descriptors: [d(['route', '/search'])],
      });
      expect(response.overall_code).toBe('OK');
    }
  });

  it("a descriptor's own limit is ignored (the rules decide), with a notice", async () => {
    const overridden = {
      ...d(['auth', 'api_key'], ['api_key', 'k5']),
      limit: { requests_per_unit: 1000, unit: 2 },
    };
    const response = await client.shouldRateLimit({ domain: 'shop', descriptors: [overridden] });
    expect(response.statuses[0]?.current_limit?.requests_per_unit).toBe(3);
    expect(logger.lines.some((l) => l.startsWith('SLUICE_ENVOY_LIMIT_OVERRIDE_IGNORED'))).toBe(true);
  });

  describe('bad input gets a defined answer and the server keeps serving', () => {
    it('an unknown domain: OK for every descriptor, noticed once', async () => {
      const response = await client.shouldRateLimit({
        domain: 'nope',
        descriptors: [d(['a', 'b']), d(['c', 'd'])],
      });
      expect(response.overall_code).toBe('OK');
      expect(response.statuses.map((s) => s.code)).toEqual(['OK', 'OK']);
      await client.shouldRateLimit({ domain: 'nope', descriptors: [] });
      expect(logger.lines.filter((l) => l.startsWith('SLUICE_ENVOY_UNKNOWN_DOMAIN'))).toHaveLength(1);
    });

    it('an empty descriptor: OK without a rule, noticed', async () => {
      const response = await client.shouldRateLimit({
        domain: 'shop',
        descriptors: [{ entries: [] }, d(['auth', ''])],
      });
      expect(response.statuses.map((s) => s.code)).toEqual(['OK', 'OK']);
      expect(logger.lines.some((l) => l.startsWith('SLUICE_ENVOY_EMPTY_DESCRIPTOR'))).toBe(true);
    });

    it('an oversized request: INVALID_ARGUMENT', async () => {
      const big = d(['auth', 'api_key'], ['api_key', 'x'.repeat(70_000)]);
      await expect(client.shouldRateLimit({ domain: 'shop', descriptors: [big] })).rejects.toMatchObject({
        code: 3,
      });
    });

    it('a value that is not UTF-8: INVALID_ARGUMENT, and no value in the log', async () => {
      // RateLimitRequest{domain="shop", descriptors=[{entries=[{key="k", value=0xff 0xfe}]}]}
      const entry = Buffer.from([0x0a, 0x01, 0x6b, 0x12, 0x02, 0xff, 0xfe]);
      const descriptor = Buffer.concat([Buffer.from([0x0a, entry.length]), entry]);
      const request = Buffer.concat([
        Buffer.from([0x0a, 0x04]),
        Buffer.from('shop'),
        Buffer.from([0x12, descriptor.length]),
        descriptor,
      ]);
      await expect(client.raw(request)).rejects.toMatchObject({
        code: 3,
        details: expect.stringContaining('UTF-8'),
      });
    });

    it('bytes that are no message at all, and too many descriptors: INVALID_ARGUMENT', async () => {
      await expect(client.raw(Buffer.from([0x12, 0x7f, 0x01]))).rejects.toMatchObject({ code: 3 });
      const many = Array.from({ length: 65 }, () => d(['a', 'b']));
      await expect(client.shouldRateLimit({ domain: 'shop', descriptors: many })).rejects.toMatchObject({
        code: 3,
      });
      const after = await client.shouldRateLimit({ domain: 'shop', descriptors: [d(['a', 'b'])] });
      expect(after.overall_code).toBe('OK');
      expect(service.stats().invalid).toBe(4);
    });
  });

  it('health: SERVING for the server and the rate limit service, NOT_FOUND for another', async () => {
    await expect(client.check()).resolves.toEqual({ status: 'SERVING' });
    await expect(client.check('envoy.service.ratelimit.v3.RateLimitService')).resolves.toEqual({
      status: 'SERVING',
    });
    await expect(client.check('other')).rejects.toMatchObject({ code: 5 });
  });
});

/** A MemoryStore whose answers take `delayMs`: a call stays in flight while the test acts. */
function slowStore(delayMs: number): Store {
  const inner = new MemoryStore();
  return {
    async evaluate(checks, now): Promise<CheckResult[]> {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      return inner.evaluate(checks, now);
    },
    release: (leases, now) => inner.release(leases, now),
    close: () => inner.close(),
  };
}

describe('operations', () => {
  it('close() tells health watchers NOT_SERVING, answers the calls in flight, then refuses new ones', async () => {
    const service = await createRateLimitService({
      rules: RULES,
      store: slowStore(300),
      port: 0,
      logger: collect(),
    });
    const client = rlsClient(service.port);
    const watched: string[] = [];
    client.watch((status) => watched.push(status));
    await expect.poll(() => watched).toEqual(['SERVING']);
    const inFlight = client.shouldRateLimit({
      domain: 'shop',
      descriptors: [d(['auth', 'api_key'], ['api_key', 'k'])],
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closed = service.close();
    await expect(inFlight).resolves.toMatchObject({ overall_code: 'OK' });
    expect(watched).toEqual(['SERVING', 'NOT_SERVING']);
    await closed;
    await expect(client.shouldRateLimit({ domain: 'shop', descriptors: [] })).rejects.toMatchObject({
      code: 14,
    });
    client.close();
  });

  it('a store that fails: on_store_error decides (allow: OK, counted); onStoreError envoy: UNAVAILABLE', async () => {
    const broken: Store = {
      evaluate: () => Promise.reject(new Error('down')),
      release: () => Promise.resolve(),
      close: () => Promise.resolve(),
    };
    const logger = collect();
    const rules = {
      domain: 'shop',
      rules: [
        RULES.rules[0],
        {
          name: 'strict',
          match: { route: '/pay' },
          key: ['route'],
          limit: { requests: 5, per: '1s' },
          on_store_error: 'deny',
        },
      ],
    } as const;
    const service = await createRateLimitService({ rules, store: broken, port: 0, logger });
    const client = rlsClient(service.port);
    const open = await client.shouldRateLimit({
      domain: 'shop',
      descriptors: [d(['auth', 'api_key'], ['api_key', 'k'])],
    });
    expect(open.overall_code).toBe('OK');
    const closed = await client.shouldRateLimit({ domain: 'shop', descriptors: [d(['route', '/pay'])] });
    expect(closed.overall_code).toBe('OVER_LIMIT');
    expect(service.stats().storeFailed).toBe(2);
    expect(logger.lines.filter((l) => l.startsWith('SLUICE_ENVOY_FAILED_OPEN'))).toHaveLength(1);
    client.close();
    await service.close();
    const envoyDecides = await createRateLimitService({
      rules,
      store: broken,
      port: 0,
      logger,
      onStoreError: 'envoy',
    });
    const second = rlsClient(envoyDecides.port);
    await expect(
      second.shouldRateLimit({ domain: 'shop', descriptors: [d(['auth', 'api_key'], ['api_key', 'k'])] }),
    ).rejects.toMatchObject({ code: 14 });
    second.close();
    await envoyDecides.close();
  });

  it('a rules file is reloaded when it changes; a broken version is refused and the last good one stays', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-envoy-'));
    const file = join(dir, 'config.yaml');
    const config = (n: number) =>
      `domain: d\ndescriptors:\n  - key: user\n    rate_limit:\n      unit: minute\n      requests_per_unit: ${n}\n`;
    writeFileSync(file, config(5));
    const logger = collect();
    const service = await createRateLimitService({ rules: file, port: 0, logger });
    const client = rlsClient(service.port);
    const limitNow = async () =>
      (await client.shouldRateLimit({ domain: 'd', descriptors: [d(['user', 'u'])] })).statuses[0]
        ?.current_limit?.requests_per_unit;
    expect(await limitNow()).toBe(5);
    writeFileSync(file, config(7));
    await expect.poll(limitNow, { timeout: 5000, interval: 100 }).toBe(7);
    writeFileSync(file, `${config(9)}    bogus: 1\n`);
    await expect
      .poll(() => logger.lines.find((l) => l.includes('SLUICE_ENVOY_RULES_REJECTED')), { timeout: 5000 })
      .toContain(`${file}:7`);
    expect(await limitNow()).toBe(7);
    client.close();
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('an unknown option gets a did-you-mean', async () => {
    await expect(createRateLimitService({ rules: RULES, porrt: 0 } as never)).rejects.toThrow(/porrt.*port/);
  });
});

describe('envoyproxy/ratelimit config files', () => {
  it('a problem names the file, line and field', () => {
    const text =
      'domain: x\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: fortnight\n      requests_per_unit: 1\n';
    expect(() => parseEnvoyConfig(text, 'envoy.yaml')).toThrow(RulesError);
    expect(() => parseEnvoyConfig(text, 'envoy.yaml')).toThrow(
      /envoy\.yaml:5:\d+.*descriptors\[0\]\.rate_limit\.unit/,
    );
    expect(() => parseEnvoyConfig('domain: x\ndescriptors:\n  - key: a\n    valu: b\n', 'e.yaml')).toThrow(
      /e\.yaml:4:5.*descriptors\[0\]\.valu.*unknown field/,
    );
    expect(() => parseEnvoyConfig('descriptors: []\n', 'e.yaml')).toThrow(/domain is required/);
  });
});
