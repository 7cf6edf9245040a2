/**
 * Escalation stages on every adapter of the contract suite (Fastify, Express, Koa, Hono, NestJS on Express and
 * Fastify): the `Sluice-Stage` header, read with a strict RFC 9651 parser, and the 429 body's `stage`.
 */
import { parseItem } from 'structured-headers';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { type AdapterFactory, adapters, type RunningApp } from './apps.js';
import { perIp, rules, T0 } from './fixtures.js';

const STAGED = perIp(2, {
  algorithm: 'fixed_window',
  warn_at: '50%',
  ban: { after: 3, within: '10m', for: '1h' },
  challenge: { after: 2 },
});

describe.each(adapters.map((adapter) => [adapter.name, adapter] as const))(
  'escalation stages: %s',
  (_name, adapter: AdapterFactory) => {
    let running: RunningApp | undefined;
    afterEach(async () => {
      await running?.close();
      running = undefined;
    });

    it('warn, limit, challenge, ban: each in the header, and the 429s in their body', async () => {
      running = await adapter.start({
        options: {
          clock: () => T0,
          logger: { warn: () => {} },
          rules: rules(STAGED),
          challenge: { secret: 'a-challenge-secret-for-tests' },
        },
      });
      const seen: [number, string, string, unknown][] = [];
      for (let i = 0; i < 5; i++) {
        const response = await request(running.url).get('/search');
        const [stage, params] = parseItem(String(response.headers['sluice-stage']));
        seen.push([response.status, String(stage), String(params.get('rule')), response.body?.stage]);
      }
      expect(seen).toEqual([
        [200, 'warn', 'per_ip', undefined],
        [200, 'warn', 'per_ip', undefined],
        [429, 'limit', 'per_ip', 'limit'],
        [429, 'challenge', 'per_ip', 'challenge'],
        [429, 'ban', 'per_ip', 'ban'],
      ]);
    });
  },
);
