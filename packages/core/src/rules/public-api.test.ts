import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { compileRules } from './compile.js';
import type { CompiledRules } from './contract.js';
import { loadRules, type RulesDocument } from './parse.js';

// The example API's real rules file, as the seed describes it.
const path = fileURLToPath(new URL('../../../../examples/public-api/rules.yaml', import.meta.url));
const namesOf = (rules: readonly { name: string }[]) => rules.map((rule) => rule.name);

describe('examples/public-api/rules.yaml', () => {
  let document: RulesDocument;
  let table: CompiledRules;
  beforeAll(async () => {
    document = await loadRules(path, { today: '2026-11-30' });
    table = compileRules(document);
  });

  it('holds the seed rules and the example API rules, with owners and no warnings', () => {
    expect(namesOf(table.rules)).toEqual([
      'anon_per_ip',
      'key_default',
      'key_override_acme',
      'search_global',
      'login_per_ip',
      'export_concurrency',
    ]);
    expect(document.warnings).toEqual([]);
  });

  it("acme's key is held to 3,000 a minute and not also to 600", () => {
    const matched = table.match({ auth: 'api_key', tenant: 'acme', api_key: 'k' }, 0);
    expect(namesOf(matched)).toEqual(['key_override_acme']);
    expect(matched[0]?.params).toMatchObject({ limit: 3000, windowMs: 60_000 });
  });

  it('another tenant keeps the default 600 a minute', () => {
    const matched = table.match({ auth: 'api_key', tenant: 'globex', api_key: 'k' }, 0);
    expect(namesOf(matched)).toEqual(['key_default']);
    expect(matched[0]?.params).toMatchObject({ limit: 600, windowMs: 60_000 });
  });

  it('a /search request with a key is checked per key and against search_global, which is shadow', () => {
    const matched = table.match({ auth: 'api_key', api_key: 'k', route: '/search', ip: '203.0.113.9' }, 0);
    expect(namesOf(matched)).toEqual(['key_default', 'search_global']);
    expect(matched[1]).toMatchObject({ mode: 'shadow', global: true, key: [] });
  });

  it('anonymous callers are limited per IP, on /login exactly, on /export by concurrency', () => {
    const anonymous = { auth: 'anonymous', ip: '203.0.113.9' };
    expect(namesOf(table.match(anonymous, 0))).toEqual(['anon_per_ip']);
    const login = table.match({ ...anonymous, route: '/login' }, 0);
    expect(namesOf(login)).toEqual(['anon_per_ip', 'login_per_ip']);
    expect(login[1]).toMatchObject({ algorithm: 'sliding_log', params: { limit: 5, windowMs: 3_600_000 } });
    const exports = table.match({ ...anonymous, route: '/export' }, 0);
    expect(namesOf(exports)).toEqual(['anon_per_ip', 'export_concurrency']);
    expect(exports[1]).toMatchObject({
      algorithm: 'concurrency',
      params: { limit: 2, windowMs: 60_000, burst: 2 },
    });
  });
});
