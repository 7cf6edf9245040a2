/** `sluice validate` and `sluice explain` on envoyproxy/ratelimit config files, told apart or by --format. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { Io } from '../io.js';
import { main } from '../main.js';

const FIXTURES = fileURLToPath(new URL('../../../envoy/fixtures/ratelimit/', import.meta.url));
const SLUICE_RULES = fileURLToPath(new URL('../../../../examples/public-api/rules.yaml', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'sluice-envoy-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function sluice(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = { out: (line) => out.push(line), err: (line) => err.push(line) };
  const code = await main(args, io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('sluice validate on an envoyproxy/ratelimit config', () => {
  it('detects the format and reports the converted table', async () => {
    const run = await sluice('validate', `${FIXTURES}example1.yaml`, `${FIXTURES}example7.yaml`);
    expect(run.code).toBe(0);
    expect(run.out).toMatch(
      /example1\.yaml: ok \(envoyproxy\/ratelimit config\), domain mongo_cps, version \S+, 2 rules$/m,
    );
    expect(run.out).toMatch(
      /example7\.yaml: ok \(envoyproxy\/ratelimit config\), domain example7, .*2 rules, 1 rule with replaces$/m,
    );
  });

  it('names the file, line, column and field of each problem, exit 1', async () => {
    const bad = file(
      'bad.yaml',
      'domain: d\ndescriptors:\n  - key: a\n    rate_limit: { unit: fortnight, requests_per_unit: 5 }\n',
    );
    const run = await sluice('validate', bad);
    expect(run.code).toBe(1);
    expect(run.err).toContain(`${bad}:4:`);
    expect(run.err).toMatch(
      /descriptors\[0\]\.rate_limit\.unit: unit must be one of second, minute, hour, day/,
    );
  });

  it('--format forces a format: a Sluice file read as Envoy is refused, an Envoy file as Sluice too', async () => {
    expect((await sluice('validate', '--format', 'sluice', SLUICE_RULES)).code).toBe(0);
    const asEnvoy = await sluice('validate', '--format', 'envoy', SLUICE_RULES);
    expect(asEnvoy.code).toBe(1);
    expect(asEnvoy.err).toMatch(/rules: unknown field; expected one of domain, descriptors/);
    expect((await sluice('validate', '--format', 'sluice', `${FIXTURES}example1.yaml`)).code).toBe(1);
    const typo = await sluice('validate', '--format', 'yaml', SLUICE_RULES);
    expect(typo.code).toBe(2);
    expect(typo.err).toContain('--format must be sluice, envoy or auto');
  });
});

describe('sluice explain on an envoyproxy/ratelimit config', () => {
  it("adds the service's envoy_path from the order of the entries, so the converted rule matches", async () => {
    const run = await sluice('explain', `${FIXTURES}example1.yaml`, 'database=users');
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/domain mongo_cps/);
    expect(run.out).toMatch(/matching rules \(1\)/);
    expect(run.out).toMatch(/limit\s+500 per 1s \(fixed_window\)/);
    // database=default is another value, not a rule this descriptor would have matched.
    expect(run.out).not.toContain('overridden');
  });

  it('names the key-only rule an exact value overrides', async () => {
    const run = await sluice('explain', `${FIXTURES}example3.yaml`, 'remote_address=50.0.0.5');
    expect(run.out).toContain(
      'overridden: remote_address (10 per 1s) is replaced by remote_address_50_0_0_5',
    );
    expect(run.out).toContain('decided by deny rule remote_address_50_0_0_5');
  });

  it('a descriptor no node describes matches nothing', async () => {
    const run = await sluice('explain', `${FIXTURES}example1.yaml`, 'database=other');
    expect(run.code).toBe(0);
    expect(run.out).toContain('no rule matches these descriptors');
  });

  it('reads nested paths in the order given: key_1, then user', async () => {
    const run = await sluice(
      'explain',
      `${FIXTURES}example7.yaml`,
      'key_1=value_1',
      'user=bkthomps',
      '--json',
    );
    expect(run.code).toBe(0);
    const json = JSON.parse(run.out) as { rules: { rule: string }[] };
    expect(json.rules.map((rule) => rule.rule)).toEqual(['specific_limit']);
    const reversed = await sluice('explain', `${FIXTURES}example7.yaml`, 'user=bkthomps', 'key_1=value_1');
    expect(reversed.out).toContain('no rule matches these descriptors');
  });
});
