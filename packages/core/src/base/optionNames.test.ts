import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLimiter } from '../engine/engine.js';
import { fileList } from '../lists/file.js';
import { decisionLogObserver } from '../observe/decisionLog.js';
import { PendingCalls } from '../resilience/pending.js';
import { resilientStore } from '../resilience/resilientStore.js';
import { compileRules } from '../rules/compile.js';
import { MemoryStore } from '../store/memory.js';
import { ConfigError } from './errors.js';
import { unknownName } from './optionNames.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-options-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const rules = compileRules({
  domain: 'options',
  rules: [{ name: 'r', key: ['ip'], limit: { requests: 1, per: '1s' } }],
});
const quiet = { warn() {} };
/** Options as plain JavaScript passes them: no type checker in the way. */
const loose = <T>(value: object) => value as T;

/** The thrown error: a ConfigError with the message given. */
function refusal(build: () => unknown): string {
  try {
    build();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('not refused');
}

describe('a misspelled option is refused with a did-you-mean', () => {
  it('MemoryStore', () => {
    expect(refusal(() => new MemoryStore(loose({ maxkeys: 10 })))).toBe(
      'MemoryStore: unknown option "maxkeys" (did you mean "maxKeys"?)',
    );
    expect(new MemoryStore({ maxKeys: 10 }).health().keys).toBe(0);
  });

  it('createLimiter', () => {
    expect(refusal(() => createLimiter(loose({ rules, timeoutMS: 50, logger: quiet })))).toBe(
      'createLimiter: unknown option "timeoutMS" (did you mean "timeoutMs"?)',
    );
    expect(refusal(() => createLimiter(loose({ rules, keysecret: 's', logger: quiet })))).toContain(
      'did you mean "keySecret"?',
    );
  });

  it('fileList', () => {
    const path = join(dir, 'list.txt');
    writeFileSync(path, '192.0.2.1\n');
    expect(refusal(() => fileList(path, loose({ debounceMS: 10 })))).toBe(
      'fileList: unknown option "debounceMS" (did you mean "debounceMs"?)',
    );
  });

  it('decisionLogObserver and its sample rates', () => {
    const logger = { info() {} };
    expect(refusal(() => decisionLogObserver(loose({ logger, keysecret: 'x' })))).toContain(
      'decisionLogObserver: unknown option "keysecret" (did you mean "keySecret"?)',
    );
    expect(refusal(() => decisionLogObserver(loose({ logger, sample: { allow: 1 } })))).toContain(
      'decisionLogObserver sample: unknown option "allow"',
    );
  });

  it('resilientStore, its breaker and fallback, PendingCalls', () => {
    const store = new MemoryStore();
    expect(refusal(() => resilientStore(store, loose({ timeoutMS: 5 })))).toContain(
      'resilientStore: unknown option "timeoutMS" (did you mean "timeoutMs"?)',
    );
    expect(
      refusal(() => resilientStore(store, loose({ breaker: { failures: 3, cooldownMS: 10 } }))),
    ).toContain('breaker: unknown option "cooldownMS" (did you mean "cooldownMs"?)');
    expect(refusal(() => resilientStore(store, loose({ fallback: { gateways: 2, gateway: 3 } })))).toContain(
      'fallback: unknown option "gateway"',
    );
    expect(refusal(() => new PendingCalls(loose({ maxpending: 5 })))).toContain('did you mean "maxPending"?');
  });

  it('compileRules', () => {
    expect(refusal(() => compileRules({ domain: 'd', rules: [] }, loose({ sorce: 'x' })))).toContain(
      'compileRules: unknown option "sorce" (did you mean "source"?)',
    );
  });
});

describe('unknownName: the one wording of a did-you-mean, shared with the CLI', () => {
  const commands = ['validate', 'explain', 'test'];

  it('suggests the closest known name, or nothing when none is close', () => {
    expect(unknownName('valdate', commands, { kind: 'command' })).toBe(
      'unknown command "valdate" (did you mean "validate"?)',
    );
    expect(unknownName('zz', commands)).toBe('unknown option "zz"');
  });

  it('with listKnown, names the known ones when none is close', () => {
    expect(unknownName('frobnicate', commands, { kind: 'command', listKnown: true })).toBe(
      'unknown command "frobnicate" (commands: validate, explain, test)',
    );
    expect(unknownName('--tday', ['--today', '--format'], { listKnown: true })).toBe(
      'unknown option "--tday" (did you mean "--today"?)',
    );
  });
});
