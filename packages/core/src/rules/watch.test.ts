import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { nextEvent } from '../../../../test/support/rules.js';
import { RulesError } from '../base/errors.js';
import { createLimiter } from '../engine/engine.js';
import type { Observer } from '../observe/contract.js';
import type { CheckResult, Store } from '../store/contract.js';
import type { CompiledRules } from './contract.js';
import { watchRules } from './watch.js';

const rulesText = (limit: number) => `domain: watched
rules:
  - name: per_ip
    key: [ip]
    limit: {requests: ${limit}, per: 60s}
    owner: team-test
    review: 2099-01-01
`;

// Line 5 holds the broken duration.
const BROKEN = rulesText(1).replace('per: 60s', 'per: 60x');

let dir: string;
let file: string;
const closers: (() => Promise<void>)[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-watch-'));
  file = join(dir, 'rules.yaml');
  writeFileSync(file, rulesText(1));
});

afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  rmSync(dir, { recursive: true, force: true });
});

function watched() {
  const source = watchRules(file, { debounceMs: 20 });
  closers.push(() => source.close());
  return source;
}

describe('watchRules', () => {
  test('loads the file at creation and refuses an invalid one with its line numbers', () => {
    const source = watched();
    expect(source.current.domain).toBe('watched');
    expect(source.current.rules.map((r) => r.name)).toEqual(['per_ip']);
    writeFileSync(file, BROKEN);
    expect(() => watchRules(file)).toThrow(RulesError);
    expect(() => watchRules(file)).toThrow(/rules\.yaml:5:\d+ rules\[0\]\.limit\.per/);
  });

  test('a changed file is swapped in; the limiter and its observer follow', async () => {
    const source = watched();
    const loaded: string[] = [];
    const observer: Observer = { onRulesLoaded: (rules) => loaded.push(rules.version) };
    const limiter = createLimiter({ rules: source, observer });
    const first = limiter.version;
    expect((await limiter.check({ ip: 'a' })).allowed).toBe(true);
    expect((await limiter.check({ ip: 'a' })).allowed).toBe(false);

    const event = nextEvent(source);
    writeFileSync(file, rulesText(5));
    const next = await event;
    expect(next).not.toBeInstanceOf(Error);
    expect(limiter.version).not.toBe(first);
    expect(limiter.version).toBe((next as CompiledRules).version);
    expect(loaded).toEqual([first, limiter.version]);
    expect((await limiter.check({ ip: 'a' })).allowed).toBe(true);
  });

  test('a broken file is reported with file:line:column and the last good version stays', async () => {
    const source = watched();
    const errors: Error[] = [];
    const limiter = createLimiter({ rules: source, observer: { onRulesError: (e) => errors.push(e) } });
    const good = limiter.version;

    const event = nextEvent(source);
    writeFileSync(file, BROKEN);
    const error = await event;
    expect(error).toBeInstanceOf(RulesError);
    expect((error as Error).message).toContain(`${file}:5:`);
    expect((error as Error).message).toContain(
      '`limit.per` must be a duration such as 30s, 5m or 1h (or day, week or month for a quota), got "60x"',
    );
    expect(errors).toEqual([error]);
    expect(limiter.version).toBe(good);
    expect(source.current.version).toBe(good);

    // Fixing the file brings the new version in.
    const fixed = nextEvent(source);
    writeFileSync(file, rulesText(7));
    expect(await fixed).toMatchObject({ domain: 'watched' });
    expect(limiter.version).not.toBe(good);
  });

  test('an editor that writes a copy and renames it over the file is seen', async () => {
    const source = watched();
    const before = source.current.version;
    const event = nextEvent(source);
    writeFileSync(join(dir, '.rules.yaml.swp'), rulesText(9));
    renameSync(join(dir, '.rules.yaml.swp'), file);
    const next = (await event) as CompiledRules;
    expect(next.version).not.toBe(before);
    expect(next.rules[0]?.params.limit).toBe(9);

    // And the watch survives the replacement: a second change arrives too.
    const again = nextEvent(source);
    writeFileSync(file, rulesText(11));
    expect(((await again) as CompiledRules).rules[0]?.params.limit).toBe(11);
  });

  test('a deleted file is an error, not an empty rule table', async () => {
    const source = watched();
    const good = source.current.version;
    const event = nextEvent(source);
    rmSync(file);
    expect(await event).toMatchObject({ code: 'ENOENT' });
    expect(source.current.version).toBe(good);
  });

  test('a check in flight finishes on the version it started with', async () => {
    const source = watched();
    let answer: (results: CheckResult[]) => void = () => {};
    const store: Store = {
      evaluate: () => new Promise((resolve) => (answer = resolve)),
      release: async () => {},
      close: async () => {},
    };
    const limiter = createLimiter({ rules: source, store });
    const started = limiter.version;
    const pending = limiter.check({ ip: 'a' });
    writeFileSync(file, rulesText(3));
    await source.reload();
    expect(limiter.version).not.toBe(started);
    answer([{ allowed: true, limit: 1, remaining: 0, resetMs: 60_000, retryAfterMs: 0 }]);
    expect((await pending).version).toBe(started);
  });
});
