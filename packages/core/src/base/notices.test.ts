import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { NOTICE_CODES } from './notices.js';

const PACKAGES = fileURLToPath(new URL('../../../', import.meta.url));

/** Every notice code written in the non-test sources of these packages (error codes, ERR_SLUICE_*, aside). */
function codesIn(...names: string[]): Set<string> {
  const codes = new Set<string>();
  for (const name of names) {
    const dir = join(PACKAGES, name, 'src');
    for (const file of readdirSync(dir, { recursive: true }) as string[]) {
      if (!file.endsWith('.ts') || file.endsWith('.test.ts') || file.endsWith('notices.ts')) continue;
      for (const [code] of readFileSync(join(dir, file), 'utf8').matchAll(/(?<![A-Z_])SLUICE_[A-Z0-9_]+/g))
        codes.add(code);
    }
  }
  return codes;
}

describe('the notice registry', () => {
  it('lists every notice code core, @sluice/redis and @sluice/postgres log, and no other', () => {
    const listed = Object.values(NOTICE_CODES).flat();
    expect(new Set(listed).size).toBe(listed.length);
    // Prefixes that build codes (SLUICE_STORE_ + kind) are not codes themselves.
    const written = [...codesIn('core', 'redis', 'postgres')].filter((code) => !code.endsWith('_'));
    expect(written.filter((code) => !listed.includes(code as never)).sort()).toEqual([]);
  });
});
