/**
 * Operating a real HTTP service: Fastify with @sluice/fastify, rules from a watched file, metrics and decision
 * logs combined, /metrics scraped over HTTP. Requests carry recognisable API keys; neither the metrics nor the
 * logs may contain them.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { combineObservers, decisionLogObserver, hashText, type Observer, watchRules } from '@sluice/core';
import { rateLimit } from '@sluice/fastify';
import { prometheusObserver } from '@sluice/prometheus';
import Fastify, { type FastifyInstance } from 'fastify';
import request from 'supertest';
import { afterAll, beforeAll, expect, test } from 'vitest';

const SECRET_KEY = 'sk_live_RECOGNISABLE_0451';
const OTHER_KEY = 'sk_live_ANOTHER_9917';

const rulesText = (limit: number) => `domain: ops_http
rules:
  - name: per_key
    match: {auth: api_key}
    key: [api_key]
    limit: {requests: ${limit}, per: 60s}
    owner: team-api
    review: 2099-01-01
  - name: per_ip_shadow
    key: [ip]
    limit: {requests: 2, per: 60s}
    mode: shadow
    owner: team-edge
    review: 2099-01-01
`;

let dir: string;
let app: FastifyInstance;
let url: string;
const logLines: string[] = [];
const rulesErrors: Error[] = [];
const file = () => join(dir, 'rules.yaml');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-ops-http-'));
  writeFileSync(file(), rulesText(3));
  const metrics = prometheusObserver();
  const logger = {
    info: (entry: object) => logLines.push(JSON.stringify(entry)),
    warn: (entry: object) => logLines.push(JSON.stringify(entry)),
  };
  const errors: Observer = { onRulesError: (error) => rulesErrors.push(error) };
  app = Fastify();
  await app.register(rateLimit, {
    rules: watchRules(file(), { debounceMs: 20 }),
    observer: combineObservers(metrics, decisionLogObserver({ logger }), errors),
    skip: (req) => req.url === '/metrics',
  });
  app.get('/things', async () => ({ ok: true }));
  app.get('/metrics', async (_req, reply) =>
    reply.type(metrics.register.contentType).send(await metrics.metrics()),
  );
  url = await app.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await app?.close();
  rmSync(dir, { recursive: true, force: true });
});

function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}

test('the /metrics text after traffic: outcomes by rule, no key or IP anywhere', async () => {
  for (let i = 0; i < 3; i++) await request(url).get('/things').set('x-api-key', SECRET_KEY).expect(200);
  const denied = await request(url).get('/things').set('x-api-key', SECRET_KEY).expect(429);
  expect(denied.headers['x-ratelimit-rule']).toBe('per_key');
  await request(url).get('/things').set('x-api-key', OTHER_KEY).expect(200);

  const scraped = await request(url).get('/metrics').expect(200);
  expect(scraped.headers['content-type']).toContain('text/plain');
  const text = scraped.text;
  expect(sample(text, 'sluice_decisions_total{rule="per_key",mode="enforce",outcome="allowed"}')).toBe(4);
  expect(sample(text, 'sluice_decisions_total{rule="per_key",mode="enforce",outcome="denied"}')).toBe(1);
  expect(
    sample(text, 'sluice_decisions_total{rule="per_ip_shadow",mode="shadow",outcome="shadow_denied"}'),
  ).toBe(3);
  expect(sample(text, 'sluice_retry_after_seconds_count{rule="per_key"}')).toBe(1);
  expect(text).toMatch(/^sluice_rules_info\{domain="ops_http",version="[0-9a-f]{12}"\} 1$/m);

  const logs = logLines.join('\n');
  expect(logs).toContain('"outcome":"denied"');
  expect(logs).toContain(hashText(SECRET_KEY));
  for (const secret of [SECRET_KEY, OTHER_KEY, 'RECOGNISABLE', '127.0.0.1']) {
    expect(text).not.toContain(secret);
    expect(logs).not.toContain(secret);
  }
  for (const hashed of [hashText(SECRET_KEY), hashText(OTHER_KEY)]) expect(text).not.toContain(hashed);
});

test('a broken rules file is reported and counted; the last good version keeps limiting', async () => {
  const before = await request(url).get('/metrics');
  const version = /sluice_rules_info\{domain="ops_http",version="([0-9a-f]+)"\}/.exec(before.text)?.[1];
  expect(version).toBeDefined();

  writeFileSync(file(), rulesText(3).replace('per: 60s', 'per: 60 seconds'));
  await until(() => rulesErrors.length > 0);
  expect(rulesErrors[0]?.message).toContain(
    `${file()}:6:31 rules[0].limit.per: \`limit.per\` must be a duration such as 30s, 5m or 1h (or day, week or month for a quota), got "60 seconds"`,
  );

  const after = (await request(url).get('/metrics')).text;
  expect(sample(after, 'sluice_rules_reloads_total{result="error"}')).toBe(1);
  expect(sample(after, `sluice_rules_info{domain="ops_http",version="${version}"}`)).toBe(1);
  await request(url).get('/things').set('x-api-key', SECRET_KEY).expect(429);
  expect(logLines.some((line) => line.includes('"event":"sluice.rules_error"'))).toBe(true);

  // A good file brings a new version in: one rules_info series, the new one.
  writeFileSync(file(), rulesText(100));
  await until(() => logLines.filter((l) => l.includes('"event":"sluice.rules_loaded"')).length >= 2);
  const reloaded = (await request(url).get('/metrics')).text;
  expect(reloaded.match(/^sluice_rules_info\{/gm)).toHaveLength(1);
  expect(reloaded).not.toContain(`version="${version}"`);
  await request(url).get('/things').set('x-api-key', SECRET_KEY).expect(200);
});
