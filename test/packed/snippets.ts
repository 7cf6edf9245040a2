/**
 * The before/after pairs of packages/core/MIGRATING.md: code blocks opened with ```js before <library> and
 * ```js after <library>, each a whole program a user could paste.
 */

/** One library's pair of programs. */
export interface MigrationPair {
  readonly library: string;
  readonly before: string;
  readonly after: string;
}

const SNIPPET = /^```js (before|after) (\S+)\n([\s\S]*?)^```$/gm;

/** Every pair in `markdown`, in the order the libraries appear; throws if a library lacks one side. */
export function migrationPairs(markdown: string): MigrationPair[] {
  const sides = new Map<string, { before?: string; after?: string }>();
  for (const [, side, library, code] of markdown.matchAll(SNIPPET)) {
    if (library === undefined || code === undefined) continue;
    const pair = sides.get(library) ?? {};
    pair[side === 'before' ? 'before' : 'after'] = code;
    sides.set(library, pair);
  }
  return [...sides].map(([library, { before, after }]) => {
    if (before === undefined || after === undefined) throw new Error(`MIGRATING.md: ${library} lacks a side`);
    return { library, before, after };
  });
}

/** The file name a snippet is run from: CommonJS when it calls require, else ESM. */
export function snippetFile(library: string, side: 'before' | 'after', code: string): string {
  const slug = library.replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
  return `migrate-${slug}-${side}.${code.includes('require(') ? 'cjs' : 'mjs'}`;
}
