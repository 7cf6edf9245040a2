/**
 * `sluice explain` shows which budget each rule draws on (issue 44): a `scope: global` rule one budget shared by
 * every region (and the global store's counters it is handed out from), a regional rule the region's own store,
 * a local rule this process.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Io } from '../../packages/cli/src/io.js';
import { main } from '../../packages/cli/src/main.js';
import { searchRules } from './apps.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-explain-regions-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function explain(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = { out: (line) => out.push(line), err: (line) => err.push(line) };
  const code = await main(['explain', ...args], io);
  return { code, out, err };
}

describe('sluice explain with regions', () => {
  it('names the budget each rule draws on', async () => {
    const rules = searchRules(5000);
    const file = join(dir, 'rules.yaml');
    const local = {
      name: 'search_local',
      match: { route: '/search' },
      key: ['api_key'],
      limit: { requests: 50, per: '1s' },
      scope: 'local',
    };
    writeFileSync(file, JSON.stringify({ ...rules, rules: [...rules.rules, local] }));
    const run = await explain(file, 'route=/search', 'api_key=k_1');
    expect(run.code).toBe(0);
    const text = run.out.join('\n');
    const ruleLines = (name: string) => {
      const from = run.out.indexOf(`  ${name}`);
      const to = run.out.findIndex((line, i) => i > from && /^ {2}\S/.test(line));
      return run.out.slice(from, to === -1 ? undefined : to);
    };
    expect(text).toContain('matching rules (3)');
    expect(ruleLines('search_global')).toContain('    scope      global, on store error: allow');
    expect(ruleLines('search_global')).toContain(
      '    budget     one global budget of 5000 per 1s shared by every region: with regions, slices of it ' +
        "(global store counters search_global.g and search_global.r.<region>) spent in each region's store",
    );
    expect(ruleLines('search_per_key')).toContain(
      "    budget     the store's: with regions, each region's own (a regional limit)",
    );
    expect(ruleLines('search_local')).toContain('    budget     this process only');
    const json = await explain(file, 'route=/search', 'api_key=k_1', '--json');
    expect(JSON.parse(json.out.join('\n')).rules.map((r: { scope: string }) => r.scope)).toEqual([
      'store',
      'global',
      'local',
    ]);
  });
});
