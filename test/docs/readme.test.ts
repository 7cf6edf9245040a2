/**
 * The README is the front door (issue 42): at most 250 lines, opening with the two repository commands (the example
 * API on the in-memory store, then the whole test suite) that `.ci/run` and a new clone rely on.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const README = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');

describe('the root README', () => {
  it('is at most 250 lines', () => {
    expect(README.trimEnd().split('\n').length).toBeLessThanOrEqual(250);
  });

  it('opens with the example command, then the test command, in its first code block', () => {
    const block = README.match(/```sh\n([\s\S]*?)```/)?.[1] ?? '';
    const commands = block.split('\n').filter((line) => line.startsWith('npx '));
    expect(commands).toEqual([
      'npx --yes pnpm@12.4.2 install && npx --yes pnpm@12.4.2 example',
      'npx --yes pnpm@12.4.2 install --frozen-lockfile && npx --yes pnpm@12.4.2 test',
    ]);
    expect(README.indexOf('```sh')).toBeLessThan(README.indexOf('## '));
  });
});
