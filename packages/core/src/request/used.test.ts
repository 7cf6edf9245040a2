import { describe, expect, it } from 'vitest';
import { compileRules } from '../rules/index.js';
import { ANONYMOUS_IP, usedByBoth, usedDescriptors } from './used.js';

describe('usedDescriptors', () => {
  it('names what match, conditions, key and cost read; an address condition reads client_ip too', () => {
    const rules = compileRules({
      rules: [
        { name: 'a', match: { auth: 'api_key' }, key: ['api_key'], limit: { requests: 1, per: '1s' } },
        { name: 'b', match: { ip: '10.0.0.0/8' }, action: 'allow' },
        {
          name: 'c',
          match: { retry: true },
          key: ['tenant'],
          limit: { requests: 1, per: '1s' },
          cost: { descriptor: 'size', max: 5 },
        },
      ],
    });
    expect([...usedDescriptors(rules)].sort()).toEqual(
      ['api_key', 'auth', 'client_ip', 'ip', 'retry', 'size', 'tenant'].sort(),
    );
    expect(usedDescriptors(rules)).toBe(usedDescriptors(rules));
  });

  it('names the address a rule of anonymous requests alone reads apart', () => {
    const rules = compileRules({
      rules: [
        { name: 'anon', match: { auth: 'anonymous' }, key: ['ip'], limit: { requests: 1, per: '1s' } },
        {
          name: 'both',
          match: { auth: ['anonymous', 'api_key'] },
          key: ['route'],
          limit: { requests: 1, per: '1s' },
        },
      ],
    });
    expect([...usedDescriptors(rules)].sort()).toEqual([ANONYMOUS_IP, 'auth', 'route'].sort());
  });

  it("names the descriptor a rule's priority class is read from", () => {
    const rules = compileRules({
      rules: [
        {
          name: 'p',
          key: ['ip'],
          limit: { requests: 1, per: '1s' },
          priority: { descriptor: 'route', default: 'normal' },
        },
      ],
    });
    expect(usedDescriptors(rules).has('route')).toBe(true);
  });

  it('joins a route table with the limiter one, once per pair', () => {
    const global = usedDescriptors(
      compileRules({ rules: [{ name: 'g', key: ['ip'], limit: { requests: 1, per: '1s' } }] }),
    );
    const route = usedDescriptors(
      compileRules({ rules: [{ name: 'r', key: ['retry_attempt'], limit: { requests: 1, per: '1s' } }] }),
    );
    const both = usedByBoth(global, route);
    expect([...both].sort()).toEqual(['ip', 'retry_attempt']);
    expect(usedByBoth(global, route)).toBe(both);
    expect(usedByBoth(global, undefined)).toBe(global);
  });
});
