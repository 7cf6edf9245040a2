/**
 * The TypeScript snippets of the docs (docs/**\/*.md, the READMEs): every ```ts or ```typescript block, with
 * where it starts and how it is marked. Info-string marks after the language:
 * - `no-check`: a fragment by nature, not typechecked (keep these rare: the snippet test lists them);
 * - `continues`: goes on from the page's previous ```ts snippet (uses its `app`, its imports), and is
 *   typechecked after it;
 * - `run`, or `run=redis`: run with tsx, its output compared with the ```text block right after it; with
 *   `run=redis` a private redis-server is started and its URL given in REDIS_URL.
 * A server's ```console block (the curl session a page shows after it, before the page's next ```ts block) is
 * its `transcript`: test/docs/snippets.test.ts runs the getting-started servers and replays their sessions.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

export interface Snippet {
  /** The Markdown file, from the repository root. */
  readonly file: string;
  /** The line of the snippet's first code line (1-based). */
  readonly line: number;
  readonly code: string;
  readonly noCheck: boolean;
  /** For a `continues` snippet: the code of the snippets it goes on from, in order. */
  readonly before: string;
  /** `memory` for `run`, `redis` for `run=redis`; undefined when the snippet is not run. */
  readonly run?: 'memory' | 'redis';
  /** The ```text block after a run snippet: the output it must print. */
  readonly expected?: string;
  /** The first ```console block after the snippet and before the page's next ```ts one: a session shown. */
  readonly transcript?: string;
}

const FENCE = /^(\s*)(`{3,})\s*([\w-]*)\s*(.*)$/;

interface Block {
  readonly line: number;
  readonly lang: string;
  readonly marks: readonly string[];
  readonly code: string;
}

/** Every fenced block of `markdown`, indented ones (in lists) included, with their indentation removed. */
export function fencedBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] ?? '');
    if (!open) continue;
    const [, indent = '', ticks = '', lang = '', rest = ''] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const text = lines[j] ?? '';
      const close = FENCE.exec(text);
      if (close && close[2] === ticks && close[3] === '' && close[4] === '') break;
      body.push(text.startsWith(indent) ? text.slice(indent.length) : text.trimStart());
    }
    blocks.push({
      line: i + 2,
      lang,
      marks: rest.split(/\s+/).filter(Boolean),
      code: `${body.join('\n')}\n`,
    });
    i = j;
  }
  return blocks;
}

/** The snippets of one Markdown file; a run snippet without a ```text block after it throws. */
export function snippetsOf(file: string, markdown: string): Snippet[] {
  const blocks = fencedBlocks(markdown);
  let previous: Snippet | undefined;
  return blocks.flatMap((block, index) => {
    if (block.lang !== 'ts' && block.lang !== 'typescript') return [];
    const runMark = block.marks.find((mark) => mark === 'run' || mark.startsWith('run='));
    const run = runMark === undefined ? undefined : runMark === 'run=redis' ? 'redis' : 'memory';
    if (runMark !== undefined && runMark !== 'run' && runMark !== 'run=redis' && runMark !== 'run=memory')
      throw new Error(`${file}:${block.line}: unknown mark ${runMark} (run, run=memory or run=redis)`);
    const next = blocks[index + 1];
    if (run !== undefined && next?.lang !== 'text')
      throw new Error(
        `${file}:${block.line}: a run snippet needs a \`\`\`text block after it: the output it prints`,
      );
    const following = blocks.slice(index + 1);
    const nextSnippet = following.findIndex((other) => other.lang === 'ts' || other.lang === 'typescript');
    const transcript = following
      .slice(0, nextSnippet === -1 ? undefined : nextSnippet)
      .find((other) => other.lang === 'console')?.code;
    const continues = block.marks.includes('continues');
    if (continues && previous === undefined)
      throw new Error(`${file}:${block.line}: a \`continues\` snippet needs a \`\`\`ts snippet before it`);
    const snippet: Snippet = {
      file,
      line: block.line,
      code: block.code,
      noCheck: block.marks.includes('no-check'),
      before: continues && previous ? previous.before + previous.code : '',
      ...(run === undefined ? {} : { run, expected: next?.code }),
      ...(transcript === undefined ? {} : { transcript }),
    };
    previous = snippet;
    return [snippet];
  });
}

function markdownUnder(root: string, dir: string): string[] {
  let entries: import('node:fs').Dirent[];
  try {
    entries = readdirSync(join(root, dir), { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const path = join(dir, entry.name);
    // Generated from the sources (the API reference shows declarations, not programs); build outputs.
    if (entry.isDirectory())
      return ['node_modules', 'api', '.vitepress', 'public'].includes(entry.name)
        ? []
        : markdownUnder(root, path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

/** The Markdown files whose snippets must run: the site's pages and every README. */
export function snippetFiles(root: string): string[] {
  const readmes = readdirSync(join(root, 'packages'))
    .map((name) => join('packages', name, 'README.md'))
    .filter((path) => {
      try {
        return readFileSync(join(root, path)).length > 0;
      } catch {
        return false;
      }
    });
  return ['README.md', ...readmes, ...markdownUnder(root, 'docs')].map((path) =>
    relative(root, join(root, path)),
  );
}

/** Every snippet of the docs. */
export function allSnippets(root: string): Snippet[] {
  return snippetFiles(root).flatMap((file) => snippetsOf(file, readFileSync(join(root, file), 'utf8')));
}
