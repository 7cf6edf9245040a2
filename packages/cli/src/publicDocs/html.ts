/** The limits page as one self-contained HTML file: inline style, no script, nothing fetched. */
import { escapeHtml } from '../report/html.js';
import type { LimitsPage } from './page.js';
import { type Block, LIMIT_COLUMNS, type LimitRow, POLICY_COLUMN, pageBlocks, title } from './text.js';

const STYLE = `
body{font:15px/1.5 system-ui,sans-serif;margin:0 auto;max-width:68em;padding:1.5em;color:#1f2328}
h1{font-size:1.8em}h2{margin-top:2em;border-bottom:1px solid #d0d7de}h3{margin-top:1.5em}
table{border-collapse:collapse;margin:.5em 0 1em;width:100%}
td,th{border:1px solid #d0d7de;padding:6px 10px;text-align:left;vertical-align:top}th{background:#f6f8fa}
table.limits{table-layout:fixed}table.limits td{overflow-wrap:anywhere}
.limits th:nth-child(1){width:12%}.limits th:nth-child(2){width:10%}.limits th:nth-child(3){width:13%}
.limits th:nth-child(4){width:12%}.limits th:nth-child(5){width:21%}.limits th:nth-child(6){width:32%}
.fields td:first-child{white-space:nowrap}
code,pre{font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace}
pre{background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;padding:12px;overflow:auto}
p code,td code{background:#eff1f3;padding:1px 4px;border-radius:4px}
`;

/** Text with `code` spans, escaped. */
function inline(text: string): string {
  return escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');
}

function limitsTable(rows: readonly LimitRow[]): string {
  const head = LIMIT_COLUMNS.map((name) => `<th scope="col">${escapeHtml(name)}</th>`).join('');
  const body = rows.map(({ rule, cells }) => {
    const tds = cells.map((text, i) =>
      i === POLICY_COLUMN && text !== '-'
        ? `<td><code>${escapeHtml(text)}</code></td>`
        : `<td>${inline(text)}</td>`,
    );
    return `<tr data-rule="${escapeHtml(rule)}">${tds.join('')}</tr>`;
  });
  return `<table class="limits"><thead><tr>${head}</tr></thead><tbody>${body.join('')}</tbody></table>`;
}

function fieldsTable(rows: readonly (readonly [string, string])[]): string {
  const body = rows.map(
    ([name, meaning]) => `<tr><td><code>${escapeHtml(name)}</code></td><td>${inline(meaning)}</td></tr>`,
  );
  return `<table class="fields"><thead><tr><th scope="col">Header</th><th scope="col">Meaning</th></tr></thead><tbody>${body.join('')}</tbody></table>`;
}

/** A block's markup. */
function markup(block: Block): string {
  switch (block.kind) {
    case 'heading': {
      const id = block.id === undefined ? '' : ` id="${escapeHtml(block.id)}"`;
      return `<h${block.level}${id}>${escapeHtml(block.text)}</h${block.level}>`;
    }
    case 'paragraph':
      return `<p>${inline(block.text)}</p>`;
    case 'limits':
      return limitsTable(block.rows);
    case 'fields':
      return fieldsTable(block.rows);
    case 'code':
      return `<pre aria-label="${escapeHtml(block.label)}"><code>${escapeHtml(block.code)}</code></pre>`;
  }
}

/** The page as HTML. */
export function limitsHtml(page: LimitsPage): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title(page))}</title>`,
    `<style>${STYLE}</style>`,
    '</head>',
    '<body>',
    '<main>',
    ...pageBlocks(page).map(markup),
    '</main>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
