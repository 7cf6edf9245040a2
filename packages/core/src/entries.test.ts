import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as root from './index.js';

const PACKAGES = fileURLToPath(new URL('../../', import.meta.url));

/** The non-test TypeScript sources of a package, recursively. */
function sourcesOf(name: string): string[] {
  const dir = join(PACKAGES, name, 'src');
  return (readdirSync(dir, { recursive: true }) as string[])
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
    .map((file) => join(dir, file));
}

describe('entries by audience', () => {
  it('the root (users) has at most 40 runtime names', () => {
    const names = Object.keys(root);
    expect(names.length).toBeGreaterThan(0);
    expect(names.length).toBeLessThanOrEqual(40);
  });

  it.each(['redis', 'postgres'])('@sluice/%s imports core only through @sluice/core/store', (name) => {
    const rootImports = sourcesOf(name).filter((file) =>
      /from '@sluice\/core(\/(?!store')[^']*)?'/.test(readFileSync(file, 'utf8')),
    );
    expect(rootImports).toEqual([]);
  });
});
