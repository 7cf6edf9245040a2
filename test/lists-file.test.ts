/**
 * Lists in files: a deny rule reading `{list: blocked_ips}` from a file that changes while the limiter runs,
 * through the public API. A broken file keeps the last good list and is reported with file:line:column.
 */
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  compileRules,
  createLimiter,
  type FileList,
  fileList,
  RulesError,
  valueList,
  watchRules,
} from '@sluice/core';
import { type ValueSet, valueSetInSteps } from '@sluice/core/store';
import { afterEach, describe, expect, it } from 'vitest';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function listFile(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-list-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'blocked.txt');
  writeFileSync(path, text);
  return path;
}

function watched(
  path: string,
  onError: (error: Error) => void = () => {},
  onReload?: (list: ValueSet) => void,
) {
  const list = fileList(path, { debounceMs: 20, onError, ...(onReload ? { onReload } : {}) });
  cleanups.push(() => list.close());
  return list;
}

function limiterWith(list: FileList) {
  const rules = compileRules({
    rules: [
      { name: 'blocked', match: { ip: { list: 'blocked_ips' } }, action: 'deny' },
      { name: 'per_ip', key: ['ip'], limit: { requests: 1000, per: '1m' } },
    ],
  });
  const limiter = createLimiter({ rules, lists: { blocked_ips: list } });
  cleanups.push(() => limiter.close());
  return limiter;
}

describe('fileList', () => {
  it('reads values and ranges, skipping comments and blank lines', async () => {
    const path = listFile('# scanners\n198.51.100.0/24  # whole net\n\n  2001:db8:bad::/48\n203.0.113.9\n');
    const limiter = limiterWith(watched(path));
    for (const ip of ['198.51.100.1', '2001:db8:bad:1::/64', '203.0.113.9']) {
      expect(await limiter.check({ ip })).toMatchObject({ allowed: false, action: 'deny', rule: 'blocked' });
    }
    for (const ip of ['198.51.101.1', '2001:db8:bae:1::/64', '203.0.113.10']) {
      expect((await limiter.check({ ip })).allowed).toBe(true);
    }
  });

  it('takes a change without a restart, and keeps the last good list when the file breaks', async () => {
    const path = listFile('198.51.100.0/24\n');
    const errors: Error[] = [];
    const list = watched(path, (error) => errors.push(error));
    const limiter = limiterWith(list);
    expect((await limiter.check({ ip: '192.0.2.1' })).allowed).toBe(true);

    writeFileSync(path, '198.51.100.0/24\n192.0.2.0/24\n');
    await list.reload();
    expect((await limiter.check({ ip: '192.0.2.1' })).action).toBe('deny');

    writeFileSync(path, '# edited\n10.0.0.0/8\n192.0.2.0/33\n');
    await list.reload();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(RulesError);
    expect(errors[0]?.message).toContain(`${path}:3:1 "192.0.2.0/33" has a prefix length outside 0–32`);
    // Still the last good list: 192.0.2.0/24 denied, 10/8 not yet.
    expect((await limiter.check({ ip: '192.0.2.1' })).action).toBe('deny');
    expect((await limiter.check({ ip: '10.1.1.1' })).allowed).toBe(true);
  });

  it('sees a file replaced by rename, as deploy tools do, without being asked', async () => {
    const path = listFile('198.51.100.0/24\n');
    let reloadedWith: (list: ValueSet) => void = () => {};
    const reloaded = new Promise<ValueSet>((resolve) => {
      reloadedWith = resolve;
    });
    const limiter = limiterWith(watched(path, () => {}, reloadedWith));
    const next = `${path}.next`;
    writeFileSync(next, '192.0.2.0/24\n');
    renameSync(next, path);
    await reloaded;
    expect((await limiter.check({ ip: '192.0.2.1' })).action).toBe('deny');
    expect((await limiter.check({ ip: '198.51.100.1' })).allowed).toBe(true);
  }, 20_000);

  it('refuses a bad file at start with every bad line placed', () => {
    const path = listFile('10.0.0.0/8\n10.0.0.1/8\n  banana:1\n2001:db8::/129\n');
    expect(() => fileList(path)).toThrow(RulesError);
    try {
      fileList(path);
    } catch (error) {
      expect((error as RulesError).problems.map((p) => `${p.line}:${p.column} ${p.message}`)).toEqual([
        '2:1 "10.0.0.1/8" has bits set past /8: did you mean 10.0.0.0/8?',
        '4:1 "2001:db8::/129" has a prefix length outside 0–128',
      ]);
    }
  });
});

describe('a rules reload naming a list the limiter was not given', () => {
  it('is refused and reported; the last good rules stay in force', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-rules-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'rules.yaml');
    const rule = (match: string) =>
      `domain: d\nrules:\n  - name: blocked\n    owner: o\n    match: ${match}\n    action: deny\n`;
    writeFileSync(path, rule('{ip: {list: blocked_ips}}'));
    const rules = watchRules(path);
    cleanups.push(() => rules.close());
    const errors: Error[] = [];
    const limiter = createLimiter({
      rules,
      lists: { blocked_ips: valueList(['198.51.100.0/24']) },
      observer: { onRulesError: (error) => errors.push(error) },
    });
    cleanups.push(() => limiter.close());
    writeFileSync(path, rule('{ip: {list: blocked_ipz}}'));
    await rules.reload();
    expect(errors.map((error) => error.message)).toEqual([
      'the rules name the list blocked_ipz, which the limiter was not given (lists option; given: blocked_ips)',
    ]);
    expect((await limiter.check({ ip: '198.51.100.1' })).action).toBe('deny');
  });
});

describe('a large list reload', () => {
  it('is built in steps, letting other work run between them', async () => {
    const entries = Array.from({ length: 100_000 }, (_, i) => `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`);
    let turns = 0;
    let building = true;
    const spin = () => {
      turns++;
      if (building) setImmediate(spin);
    };
    setImmediate(spin);
    // What fileList and redisList reload with; no I/O here, so every turn comes from a step.
    const list = await valueSetInSteps(entries, 'big');
    building = false;
    // Built in one go, nothing else could run until it was done; in steps of 2,000, the loop turned ~50 times.
    expect(turns).toBeGreaterThanOrEqual(25);
    expect(list.size).toBe(100_000);
  }, 60_000);
});
