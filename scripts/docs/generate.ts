/**
 * `pnpm docs:gen`: writes the generated parts of the documentation site before every docs build:
 * docs/reference/rules.md (from the rule schema), docs/reference/options.md (from the option interfaces),
 * docs/reference/algorithms-charts.md and docs/public/charts/<algorithm>.svg (from each algorithm's decisions),
 * and docs/api/ (TypeDoc over each package's public entries). These are build outputs, ignored by git.
 * `--skip-api` leaves out TypeDoc (the slow part: about a minute on two cores).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { algorithmCharts, chartsPage } from './charts.js';
import { optionsPage, ROOT } from './options.js';
import { rulesPage } from './rules.js';

const DOCS = join(ROOT, 'docs');

function write(path: string, text: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
}

/** Writes every generated page; `api: false` skips TypeDoc. */
export async function generate({ api = true } = {}): Promise<void> {
  write(join(DOCS, 'reference', 'rules.md'), rulesPage());
  const charts = await algorithmCharts();
  for (const { algorithm, svg } of charts) write(join(DOCS, 'public', 'charts', `${algorithm}.svg`), svg);
  write(join(DOCS, 'reference', 'algorithms-charts.md'), chartsPage(charts));
  write(join(DOCS, 'reference', 'options.md'), optionsPage());
  if (api) {
    rmSync(join(DOCS, 'api'), { recursive: true, force: true });
    execFileSync(join(ROOT, 'node_modules', '.bin', 'typedoc'), ['--options', 'typedoc.json'], {
      cwd: ROOT,
      stdio: 'inherit',
    });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await generate({ api: !process.argv.includes('--skip-api') });
}
