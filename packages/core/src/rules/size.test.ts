/**
 * How large a rules file may be: big enough for a service with 20,000 tenant overrides by default, a cap the
 * loaders take as an option, and a huge file refused by its size before any of it is read.
 */
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, RulesError } from '../base/errors.js';
import { compileRules } from './compile.js';
import { MAX_RULES_BYTES } from './file.js';
import { loadRules, loadRulesSync, parseRules } from './parse.js';
import { resolveRules } from './resolve.js';
import { watchRules } from './watch.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-rules-size-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A per-tenant rule and `count` overrides of it, one per tenant, written as an operator would. */
function tenantRules(count: number): string {
  const lines = [
    'domain: tenants',
    'rules:',
    '  - name: per_tenant',
    '    key: [tenant]',
    '    limit: {requests: 100, per: 1m}',
    '    owner: team-api',
  ];
  for (let i = 0; i < count; i++)
    lines.push(
      `  - name: tenant_${i}`,
      `    match: {tenant: t${i}}`,
      '    key: [tenant]',
      `    limit: {requests: ${1000 + i}, per: 1m}`,
      '    overrides: per_tenant',
      '    owner: team-api',
    );
  return `${lines.join('\n')}\n`;
}

describe('rules file size', () => {
  it('loads 20,000 tenant overrides with the default cap', async () => {
    const path = join(dir, 'tenants.yaml');
    const text = tenantRules(20_000);
    writeFileSync(path, text);
    const bytes = Buffer.byteLength(text);
    expect(bytes).toBeGreaterThan(1024 * 1024); // over the old cap
    expect(bytes).toBeLessThan(MAX_RULES_BYTES);
    const table = compileRules(await loadRules(path));
    expect(table.rules).toHaveLength(20_001);
    expect(table.match({ tenant: 't19999' }, Date.now()).map((rule) => rule.name)).toEqual(['tenant_19999']);
  }, 120_000);

  it('refuses a sparse 100 MB file by its size, before reading it, with or without a cap given', async () => {
    const path = join(dir, 'huge.yaml');
    writeFileSync(path, 'domain: d\nrules: []\n');
    truncateSync(path, 100_000_000);
    const started = performance.now();
    await expect(loadRules(path)).rejects.toThrow(RulesError);
    expect(() => loadRulesSync(path)).toThrow('the rules are 100000000 bytes; the limit is 16777216 bytes');
    expect(() => watchRules(path)).toThrow(RulesError);
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it('takes the cap as the maxBytes option of every loader', async () => {
    const path = join(dir, 'small.yaml');
    const text = tenantRules(10);
    writeFileSync(path, text);
    const bytes = Buffer.byteLength(text);
    const cap = { maxBytes: bytes - 1 };
    const refused = `the rules are ${bytes} bytes; the limit is ${bytes - 1} bytes (the maxBytes option)`;
    await expect(loadRules(path, cap)).rejects.toThrow(refused);
    expect(() => loadRulesSync(path, cap)).toThrow(refused);
    expect(() => parseRules(text, cap)).toThrow(refused);
    await expect(resolveRules(path, cap)).rejects.toThrow(refused);
    expect(() => watchRules(path, cap)).toThrow(refused);
    expect((await loadRules(path, { maxBytes: bytes })).rules).toHaveLength(11);
    const watched = watchRules(path, { maxBytes: bytes });
    expect(watched.current.rules).toHaveLength(11);
    await watched.close();
  });

  it('refuses a cap that is not a positive whole number, and a misspelled one', async () => {
    const path = join(dir, 'small.yaml');
    expect(() => parseRules('domain: d\nrules: []\n', { maxBytes: 0 })).toThrow(ConfigError);
    expect(() => loadRulesSync(path, { maxBytes: 1.5 })).toThrow('maxBytes must be a positive whole number');
    expect(() => loadRulesSync(path, { maxbytes: 10 } as never)).toThrow(
      'loadRulesSync: unknown option "maxbytes" (did you mean "maxBytes"?)',
    );
    expect(() => watchRules(path, { debounceMS: 10 } as never)).toThrow('did you mean "debounceMs"?');
  });
});
