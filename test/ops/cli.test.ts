/**
 * The `sluice` command line, run as a user runs it: a subprocess (node with tsx's loader), asserting exit codes
 * and output.
 */
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type CompiledRule,
  compileRules,
  createLimiter,
  type Descriptors,
  decisionLogObserver,
  loadRules,
  tagFor,
} from '@sluice/core';
import { redisRules } from '@sluice/redis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { rolloutBucket } from '../../packages/core/src/store/tags.js';
import { freePort, type RedisServer, randomPrefix, startRedis } from '../support/redis.js';
import { sluiceProcess as sluice } from './fixtures/sluice.js';

const ROOT = join(import.meta.dirname, '..', '..');
const FIXTURES = 'test/ops/fixtures';

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'sluice-cli-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('sluice', () => {
  test('--help lists the commands and exit codes; no command or an unknown one is a usage error', async () => {
    const help = await sluice('--help');
    expect(help.code).toBe(0);
    for (const name of ['validate', 'explain', 'test', 'report', 'replay', 'simulate', 'capacity', 'push'])
      expect(help.stdout).toContain(`  ${name}`);
    expect(help.stdout).toContain('Exit codes: 0 ok; 1 findings');
    expect((await sluice()).code).toBe(2);
    const [typo, unknown] = await Promise.all([sluice('valdate', 'rules.yaml'), sluice('frobnicate')]);
    expect(typo).toMatchObject({ code: 2, stdout: '' });
    expect(typo.stderr).toBe(
      'sluice: unknown command "valdate" (did you mean "validate"?)\n' +
        'Run `sluice --help` for what each command does.\n',
    );
    // Nothing close: the commands are named.
    expect(unknown).toMatchObject({ code: 2, stdout: '' });
    expect(unknown.stderr.split('\n')[0]).toBe(
      'sluice: unknown command "frobnicate" (commands: validate, explain, test, report, replay, simulate, capacity, push, unban, audit, docs, openapi, top, dashboard, migrate, rls)',
    );
  }, 120_000);

  test('a misspelled flag of every command gets a did-you-mean, exit 2, on stderr', async () => {
    const typos: [command: string, typo: string, meant: string][] = [
      ['validate', '--tday', '--today'],
      ['explain', '--key-secrt', '--key-secret'],
      ['test', '--lst', '--list'],
      ['report', '--hmtl', '--html'],
      ['replay', '--compre', '--compare'],
      ['simulate', '--patern', '--pattern'],
      ['capacity', '--shard-memroy', '--shard-memory'],
      ['push', '--domian', '--domain'],
      ['unban', '--glbal', '--global'],
      ['migrate', '--table-prefx', '--table-prefix'],
      ['rls', '--redsi', '--redis'],
      ['top', '--intervl', '--interval'],
      ['dashboard', '--tokn', '--token'],
    ];
    const runs = await Promise.all(typos.map(([command, typo]) => sluice(command, typo, 'x')));
    for (const [i, run] of runs.entries()) {
      const [command, typo, meant] = typos[i] ?? [];
      expect(run).toMatchObject({ code: 2, stdout: '' });
      expect(run.stderr.split('\n')[0]).toBe(
        `sluice ${command}: unknown option "${typo}" (did you mean "${meant}"?)`,
      );
    }
  }, 240_000);

  test('every command has --help; a bad option is a usage error', async () => {
    const names = ['validate', 'explain', 'test', 'report', 'replay', 'simulate', 'capacity', 'push'];
    const runs = await Promise.all(names.map((name) => sluice(name, '--help')));
    for (const [i, run] of runs.entries()) {
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(new RegExp(`^Usage: sluice ${names[i]} `));
      expect(run.stdout).toContain('Exit codes:');
    }
    const bad = await sluice('validate', '--nope', `${FIXTURES}/rules.yaml`);
    expect(bad.code).toBe(2);
    // Nothing close: the command's flags are named.
    expect(bad.stderr.split('\n')[0]).toBe(
      'sluice validate: unknown option "--nope" (options: --today, --format, --help)',
    );
    const short = await sluice('validate', '-x', `${FIXTURES}/rules.yaml`);
    expect(short).toMatchObject({ code: 2, stdout: '' });
    expect(short.stderr).toContain(
      'sluice validate: unknown option "-x" (options: --today, --format, --help)',
    );
    // A missing value is still parseArgs's own usage error.
    const missing = await sluice('validate', `${FIXTURES}/rules.yaml`, '--today');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("Option '--today <value>' argument missing");
  }, 240_000);
});

describe('sluice validate', () => {
  test('a good file: exit 0 with its version', async () => {
    const run = await sluice('validate', `${FIXTURES}/rules.yaml`);
    const { rules } = await loadCompiled(`${FIXTURES}/rules.yaml`);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toBe(
      `${FIXTURES}/rules.yaml: ok, domain ops_test, version ${rules.version}, 5 rules\n`,
    );
  });

  test('every error with file:line:column, exit 1', async () => {
    const run = await sluice('validate', `${FIXTURES}/broken.yaml`);
    expect(run.code).toBe(1);
    expect(run.stderr.split('\n')).toEqual([
      `${FIXTURES}/broken.yaml:5:5 rules[0].limt: unknown field "limt" (did you mean "limit"?)`,
      `${FIXTURES}/broken.yaml:8:33 rules[1].limit.per: \`limit.per\` must be a duration such as 30s, 5m or 1h (or day, week or month for a quota), got "60x"`,
      `${FIXTURES}/broken.yaml: 2 errors`,
      '',
    ]);
  });

  test('a YAML syntax error at the line and column where the bad text starts; a wrong value in plain words', async () => {
    const indent = join(tmp, 'indent.yaml');
    writeFileSync(
      indent,
      'domain: d\nrules:\n  - name: a\n    key: [ip]\n    limit:\n      requests: 5\n     per: 1m\n',
    );
    const zero = join(tmp, 'zero.yaml');
    writeFileSync(zero, 'domain: d\nrules:\n  - name: a\n    key: [ip]\n    limit: 0\n');
    const [yaml, plain] = await Promise.all([sluice('validate', indent), sluice('validate', zero)]);
    expect(yaml).toMatchObject({ code: 1, stdout: '' });
    expect(yaml.stderr).toBe(
      `${indent}:7:6 YAML: All mapping items must start at the same column\n${indent}: 1 error\n`,
    );
    expect(plain).toMatchObject({ code: 1, stdout: '' });
    expect(plain.stderr.split('\n')[0]).toBe(
      `${zero}:5:12 rules[0].limit: \`limit\` must be {requests, per} or {concurrent, lease}, got 0`,
    );
  });

  test('overdue reviews and missing owners are warnings: printed, exit 0', async () => {
    const run = await sluice('validate', `${FIXTURES}/warnings.yaml`, '--today', '2026-03-02');
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`${FIXTURES}/warnings.yaml:3:5 rules[0]: warning: missing owner`);
    expect(run.stderr).toContain(
      `${FIXTURES}/warnings.yaml:10:13 rules[1].review: warning: review overdue since 2020-01-01`,
    );
    expect(run.stdout).toContain('2 rules, 2 warnings');
  });

  test('a missing file or a bad --today is a usage error', async () => {
    const missing = await sluice('validate', `${FIXTURES}/nope.yaml`);
    expect(missing).toMatchObject({ code: 2, stderr: `${FIXTURES}/nope.yaml: no such file\n` });
    expect((await sluice('validate', `${FIXTURES}/rules.yaml`, '--today', 'tomorrow')).code).toBe(2);
  });
});

describe('sluice explain', () => {
  test('matching rules with overrides applied, hashed counter tags and mode', async () => {
    const descriptors = { auth: 'api_key', tenant: 'acme', api_key: 'k_123', route: '/search' };
    const run = await sluice(
      'explain',
      `${FIXTURES}/rules.yaml`,
      ...Object.entries(descriptors).map(([k, v]) => `${k}=${v}`),
    );
    const { rules } = await loadCompiled(`${FIXTURES}/rules.yaml`);
    const rule = (name: string) => rules.rules.find((r) => r.name === name)!;
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('matching rules (2)');
    expect(run.stdout).toContain(
      `counter    ${tagFor(rule('key_override_acme'), descriptors)} (key [api_key]`,
    );
    expect(run.stdout).toContain(
      `counter    ${tagFor(rule('search_global'), descriptors)} (one counter for everyone`,
    );
    expect(run.stdout).toContain('mode       shadow (counted and logged, never denies)');
    expect(run.stdout).toContain('overridden: key_default (5 per 1m) is replaced by key_override_acme');
  });

  test('names the Redis keys with the store prefix given, and refuses a prefix RedisStore would', async () => {
    const args = ['explain', `${FIXTURES}/rules.yaml`, 'auth=api_key', 'api_key=k_1'];
    const { rules } = await loadCompiled(`${FIXTURES}/rules.yaml`);
    const tag = tagFor(rules.rules.find((r) => r.name === 'key_default')!, { api_key: 'k_1' });
    expect((await sluice(...args)).stdout).toContain(`Redis keys sluice:{${tag}}:key_default:*`);
    expect((await sluice(...args, '--prefix', 'api-eu')).stdout).toContain(
      `Redis keys api-eu:{${tag}}:key_default:*`,
    );
    const refused = await sluice(...args, '--prefix', 'a{b}');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--prefix must be 1-64 characters');
  });

  test('rollout says whether this key is enforced, and a missing key descriptor is explained', async () => {
    const { rules } = await loadCompiled(`${FIXTURES}/rules.yaml`);
    const slice = rules.rules.find((r) => r.name === 'export_slice')!;
    // One key inside the 50% rollout and one outside, found by the same hash the limiter uses.
    const keys = Array.from({ length: 40 }, (_, i) => `k_${i}`);
    const inside = keys.find((key) => effectiveModeOf(slice, { api_key: key }) === 'enforce')!;
    const outside = keys.find((key) => effectiveModeOf(slice, { api_key: key }) === 'shadow')!;
    const [enforced, shadowed, none] = await Promise.all([
      sluice('explain', `${FIXTURES}/rules.yaml`, 'route=/export', `api_key=${inside}`, '--json'),
      sluice('explain', `${FIXTURES}/rules.yaml`, 'route=/export', `api_key=${outside}`),
      sluice('explain', `${FIXTURES}/rules.yaml`, 'route=/export'),
    ]);
    expect(enforced.code).toBe(0);
    expect(JSON.parse(enforced.stdout)).toMatchObject({
      rules: [{ rule: 'export_slice', mode: 'enforce', rollout: 50, effectiveMode: 'enforce' }],
    });
    expect(shadowed.stdout).toContain('enforce, rollout 50%: this key is outside the rollout, shadowed');
    // A rule whose key descriptor is missing does not apply.
    expect(none.stdout).toContain('no rule matches these descriptors');
    expect((await sluice('explain', `${FIXTURES}/rules.yaml`, 'not-a-pair')).code).toBe(2);
  });
});

describe('sluice test', () => {
  test('passing cases: exit 0', async () => {
    const run = await sluice('test', `${FIXTURES}/rules.yaml`, `${FIXTURES}/cases.yaml`);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('ok    acme gets 10 a minute instead of the default 5');
    expect(run.stdout).toContain('4 cases passed, 0 failed');
  });

  test("the seed's policies hold for examples/public-api/rules.yaml", async () => {
    const run = await sluice('test', 'examples/public-api/rules.yaml', `${FIXTURES}/public-api-cases.yaml`);
    expect(run.stdout).toContain('3 cases passed, 0 failed');
    expect(run.code).toBe(0);
  });

  test('a failing case is printed as a diff: exit 1', async () => {
    const run = await sluice('test', `${FIXTURES}/rules.yaml`, `${FIXTURES}/failing-cases.yaml`);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(
      [
        'FAIL  acme is held to the default (wrong on purpose)',
        '      step 1 (at 0s, 6 requests)',
        '      - allowed: 5',
        '      + allowed: 6',
        '      - denied: 1',
        '      + denied: 0',
        '      - rule: "key_default"',
        '      + rule: "(no denial)"',
      ].join('\n'),
    );
    expect(run.stdout).toContain('ok    anonymous callers get three');
    expect(run.stdout).toContain('1 case passed, 1 failed');
  });

  test('an invalid cases file is a usage error naming the field; invalid rules are findings', async () => {
    const run = await sluice('test', `${FIXTURES}/rules.yaml`, `${FIXTURES}/invalid-cases.yaml`);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${FIXTURES}/invalid-cases.yaml:5:5 cases[0]: Unrecognized key: "expct"`);
    const backwards = join(tmp, 'backwards.yaml');
    writeFileSync(
      backwards,
      'cases:\n  - name: b\n    steps:\n      - {at: 10s, expect: allowed}\n      - {at: 5s, expect: allowed}\n',
    );
    const back = await sluice('test', `${FIXTURES}/rules.yaml`, backwards);
    expect(back).toMatchObject({
      code: 2,
      stderr: expect.stringContaining(`${backwards}:4:7 cases[0].steps: steps must be in time order`),
    });
    const badYaml = join(tmp, 'bad-yaml.yaml');
    writeFileSync(badYaml, 'cases:\n  - name: x\n    expect: [allowed\n');
    const unparsable = await sluice('test', `${FIXTURES}/rules.yaml`, badYaml);
    expect(unparsable.code).toBe(2);
    expect(unparsable.stderr).toMatch(new RegExp(`${badYaml}:\\d+:\\d+: YAML: `));
    const broken = await sluice('test', `${FIXTURES}/broken.yaml`, `${FIXTURES}/cases.yaml`);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain('broken.yaml:8:33');
  });
});

describe('sluice report', () => {
  test('groups would-be denials by rule and hashed key, top offenders first, per hour; HTML page', async () => {
    const log = join(tmp, 'decisions.jsonl');
    const rules = compileRules({
      domain: 'report',
      rules: [{ name: 'per_ip_shadow', key: ['ip'], limit: { requests: 2, per: '60s' }, mode: 'shadow' }],
    });
    let now = Date.UTC(2026, 2, 2, 10, 0, 0);
    const logger = {
      info: (entry: object) => appendFileSync(log, `${JSON.stringify({ level: 30, time: now, ...entry })}\n`),
      warn: (entry: object) => appendFileSync(log, `${JSON.stringify({ level: 40, time: now, ...entry })}\n`),
    };
    const limiter = createLimiter({
      rules,
      clock: () => now,
      observer: decisionLogObserver({ logger, clock: () => now }),
    });
    const heavy = { ip: '198.51.100.1' };
    const light = { ip: '198.51.100.2' };
    for (let i = 0; i < 50; i++) await limiter.check(heavy);
    now = Date.UTC(2026, 2, 2, 11, 30, 0);
    for (let i = 0; i < 5; i++) await limiter.check(light);
    appendFileSync(log, 'not json\n');

    const html = join(tmp, 'report.html');
    const run = await sluice('report', log, '--html', html);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('warning: 1 lines were not JSON and were skipped\n');
    const rule = rules.rules[0]!;
    const [heavyTag, lightTag] = [tagFor(rule, heavy), tagFor(rule, light)];
    const lines = run.stdout.split('\n');
    expect(lines).toContain('  per_ip_shadow  51        0');
    const heavyAt = lines.findIndex((l) => l.includes(heavyTag!));
    const lightAt = lines.findIndex((l) => l.includes(lightTag!));
    expect(heavyAt).toBeGreaterThan(0);
    expect(lightAt).toBeGreaterThan(heavyAt);
    expect(lines[heavyAt]).toMatch(/ 48 +0 +2026-03-02 10:00 +2026-03-02 10:00$/);
    expect(run.stdout).toMatch(/2026-03-02 10:00 +48\n/);
    expect(run.stdout).toMatch(/2026-03-02 11:00 +3\n/);
    expect(run.stdout).not.toContain('198.51.100');

    expect(existsSync(html)).toBe(true);
    const page = readFileSync(html, 'utf8');
    expect(page).toContain('<svg');
    expect(page).toContain('<polyline');
    expect(page).toContain(heavyTag);
    expect(page).not.toMatch(/<script|src=|href=|198\.51\.100/);
  });

  test('a missing log is a usage error', async () => {
    expect((await sluice('report', join(tmp, 'none.jsonl'))).code).toBe(2);
  });
});

describe('sluice push', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => server?.stop());

  test('publishes a version that gateways load; invalid rules and a dead Redis are failures', async () => {
    const { Redis } = await import('ioredis');
    const prefix = randomPrefix();
    const url = `redis://127.0.0.1:${server.port}`;
    const run = await sluice('push', `${FIXTURES}/rules.yaml`, '--redis', url, '--prefix', prefix);
    const { rules } = await loadCompiled(`${FIXTURES}/rules.yaml`);
    expect(run.stdout).toContain(`published ops_test version ${rules.version} (serial 1)`);
    expect(run.code).toBe(0);

    const client = new Redis(url);
    try {
      const source = await redisRules(client, { domain: 'ops_test', prefix });
      expect(source.current.version).toBe(rules.version);
      await source.close?.();
    } finally {
      client.disconnect();
    }

    const broken = await sluice('push', `${FIXTURES}/broken.yaml`, '--redis', url, '--prefix', prefix);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain('nothing published');
    const dead = await sluice(
      'push',
      `${FIXTURES}/rules.yaml`,
      '--redis',
      `redis://127.0.0.1:${await freePort()}`,
    );
    expect(dead.code).toBe(1);
    expect(dead.stderr).toContain('push to redis://127.0.0.1:');
    expect((await sluice('push', `${FIXTURES}/rules.yaml`)).code).toBe(2);
  });
});

/** The mode a rollout gives this key: enforced inside the first `rollout` percent of tag hashes. */
function effectiveModeOf(rule: CompiledRule, descriptors: Descriptors): 'enforce' | 'shadow' {
  return rolloutBucket(tagFor(rule, descriptors)!) < rule.rollout ? 'enforce' : 'shadow';
}

async function loadCompiled(path: string) {
  return { rules: compileRules(await loadRules(join(ROOT, path))) };
}
