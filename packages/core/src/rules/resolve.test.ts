import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError, RulesError } from '../base/errors.js';
import { compileRules } from './compile.js';
import { isCompiledRules, resolveRules, resolveRulesSync } from './resolve.js';

const path = fileURLToPath(new URL('../../../../examples/public-api/rules.yaml', import.meta.url));
const rules = { domain: 'api', rules: [{ name: 'per_ip', key: ['ip'], limit: { requests: 1, per: '1s' } }] };

describe('resolveRules', () => {
  it('loads and compiles a path', async () => {
    const table = await resolveRules(path);
    expect(table.domain).toBe('public_api');
    expect(resolveRulesSync(path).version).toBe(table.version);
  });

  it('compiles an object and returns a compiled table as is', async () => {
    const table = await resolveRules(rules);
    expect(table.version).toBe(compileRules(rules).version);
    expect(await resolveRules(table)).toBe(table);
    expect(resolveRulesSync(table)).toBe(table);
  });

  it('rejects invalid rules with a RulesError and anything else with a ConfigError', async () => {
    await expect(resolveRules({ rules: [{ name: 'x' }] } as never)).rejects.toThrow(RulesError);
    await expect(resolveRules(42 as never)).rejects.toThrow(ConfigError);
    // A missing await in plain JavaScript: said as such, not as a rules object lacking `rules`.
    expect(() => resolveRulesSync(Promise.resolve(rules) as never)).toThrow(
      'rules is a Promise: did you forget await?',
    );
    expect(() => resolveRulesSync({ rules: [{ name: 'x' }] } as never, { source: 'route /x' })).toThrow(
      'route /x rules[0].limit: missing required field "limit"',
    );
  });
});

describe('isCompiledRules', () => {
  it('tells compiled tables from rule objects', () => {
    expect(isCompiledRules(compileRules(rules))).toBe(true);
    expect(isCompiledRules(rules)).toBe(false);
    expect(isCompiledRules(null)).toBe(false);
    expect(isCompiledRules('rules.yaml')).toBe(false);
  });
});
