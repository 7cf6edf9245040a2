/** The limits page in Markdown (GitHub's flavour: tables, fenced code). */
import { httpText } from './examples.js';
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

const POLICY = LIMIT_COLUMNS.indexOf('Policy header');

/** A table cell: `|` escaped, line breaks folded. */
const cell = (text: string): string => text.replaceAll('|', '\\|').replace(/\s*\n\s*/g, ' ');

function table(headers: readonly string[], rows: readonly (readonly string[])[]): string[] {
  return [
    `| ${headers.map(cell).join(' | ')} |`,
    `|${headers.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.map(cell).join(' | ')} |`),
  ];
}

const fence = (language: string, code: string): string[] => [`\`\`\`${language}`, code, '```'];

/** The page as Markdown. */
export function limitsMarkdown(page: LimitsPage): string {
  const lines = [`# ${title(page)}`, '', intro(page), '', '## Limits', ''];
  if (page.limits.length === 0) lines.push(NONE_PUBLIC, '');
  for (const [who, limits] of audiences(page)) {
    const rows = limits.map((limit) =>
      limitCells(page, limit).map((text, i) => (i === POLICY && text !== '-' ? `\`${text}\`` : text)),
    );
    lines.push(`### ${who}`, '', ...table(LIMIT_COLUMNS, rows), '');
  }
  const { denied, unavailable } = page;
  if (denied !== undefined && unavailable !== undefined) {
    const samples = page.samples.get(denied.rule.name)!;
    lines.push(
      '## Response headers',
      '',
      fieldsIntro,
      '',
      ...table(['Header', 'Meaning'], fieldRows(page.fields)),
    );
    lines.push('', allowedIntro(denied), '', ...fence('http', httpText(samples.allowed)), '');
    lines.push(
      '## 429 Too Many Requests',
      '',
      deniedIntro(denied),
      '',
      ...fence('http', httpText(samples.denied)),
    );
    const outage = page.samples.get(unavailable.rule.name)!.unavailable;
    lines.push('', '## 503 Service Unavailable', '', unavailableIntro(page, unavailable), '');
    lines.push(...fence('http', httpText(outage)), '');
  }
  lines.push('## Backing off', '', BACKOFF_INTRO, '');
  for (const example of page.backoff)
    lines.push(`### ${example.title}`, '', ...fence(example.language, example.code), '');
  return lines.join('\n');
}
