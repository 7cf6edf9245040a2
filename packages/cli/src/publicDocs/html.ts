/** The limits page as one self-contained HTML file: inline style, no script, nothing fetched. */
import { escapeHtml } from '../report/html.js';
import { httpText } from './examples.js';
import type { PublicLimit } from './limits.js';
import type { LimitsPage } from './page.js';
import {
  allowedIntro,
  audiences,
  BACKOFF_INTRO,
  deniedIntro,
  fieldRows,
  fieldsIntro,
  intro,
  LIMIT_COLUMNS,
  limitCells,
  NONE_PUBLIC,
  title,
  unavailableIntro,
} from './text.js';

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

const pre = (code: string, label: string): string =>
  `<pre aria-label="${escapeHtml(label)}"><code>${escapeHtml(code)}</code></pre>`;

function limitsTable(page: LimitsPage, limits: readonly PublicLimit[]): string {
  const head = LIMIT_COLUMNS.map((name) => `<th scope="col">${escapeHtml(name)}</th>`).join('');
  const rows = limits.map((limit) => {
    const cells = limitCells(page, limit).map((text, i) =>
      LIMIT_COLUMNS[i] === 'Policy header' && text !== '-'
        ? `<td><code>${escapeHtml(text)}</code></td>`
        : `<td>${inline(text)}</td>`,
    );
    return `<tr data-rule="${escapeHtml(limit.rule.name)}">${cells.join('')}</tr>`;
  });
  return `<table class="limits"><thead><tr>${head}</tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function fieldsTable(page: LimitsPage): string {
  const rows = fieldRows(page.fields).map(
    ([name, meaning]) => `<tr><td><code>${escapeHtml(name!)}</code></td><td>${inline(meaning!)}</td></tr>`,
  );
  return `<table class="fields"><thead><tr><th scope="col">Header</th><th scope="col">Meaning</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** The responses' sections: headers, 429, 503. */
function responses(page: LimitsPage): string[] {
  const { denied, unavailable } = page;
  if (denied === undefined || unavailable === undefined) return [];
  const samples = page.samples.get(denied.rule.name)!;
  const outage = page.samples.get(unavailable.rule.name)!.unavailable;
  return [
    '<h2 id="headers">Response headers</h2>',
    `<p>${inline(fieldsIntro)}</p>`,
    fieldsTable(page),
    `<p>${inline(allowedIntro(denied))}</p>`,
    pre(httpText(samples.allowed), 'A response within a limit'),
    '<h2 id="status-429">429 Too Many Requests</h2>',
    `<p>${inline(deniedIntro(denied))}</p>`,
    pre(httpText(samples.denied), '429 response'),
    '<h2 id="status-503">503 Service Unavailable</h2>',
    `<p>${inline(unavailableIntro(page, unavailable))}</p>`,
    pre(httpText(outage), '503 response'),
  ];
}

/** The page as HTML. */
export function limitsHtml(page: LimitsPage): string {
  const sections = audiences(page).flatMap(([who, limits]) => [
    `<h3>${escapeHtml(who)}</h3>`,
    limitsTable(page, limits),
  ]);
  const backoff = page.backoff.flatMap((example) => [
    `<h3>${escapeHtml(example.title)}</h3>`,
    pre(example.code, `Backing off: ${example.title}`),
  ]);
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
    `<h1>${escapeHtml(title(page))}</h1>`,
    `<p>${inline(intro(page))}</p>`,
    '<h2 id="limits">Limits</h2>',
    ...(page.limits.length === 0 ? [`<p>${escapeHtml(NONE_PUBLIC)}</p>`] : sections),
    ...responses(page),
    '<h2 id="backoff">Backing off</h2>',
    `<p>${inline(BACKOFF_INTRO)}</p>`,
    ...backoff,
    '</main>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
