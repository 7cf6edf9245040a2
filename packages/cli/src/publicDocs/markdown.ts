/** The limits page in Markdown (GitHub's flavour: tables, fenced code). */
import type { LimitsPage } from './page.js';
import { type Block, LIMIT_COLUMNS, POLICY_COLUMN, pageBlocks } from './text.js';

/** A table cell: `|` escaped, line breaks folded. */
const cell = (text: string): string => text.replaceAll('|', '\\|').replace(/\s*\n\s*/g, ' ');

function table(headers: readonly string[], rows: readonly (readonly string[])[]): string[] {
  return [
    `| ${headers.map(cell).join(' | ')} |`,
    `|${headers.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.map(cell).join(' | ')} |`),
  ];
}

/** A block's lines. */
function lines(block: Block): string[] {
  switch (block.kind) {
    case 'heading':
      return [`${'#'.repeat(block.level)} ${block.text}`];
    case 'paragraph':
      return [block.text];
    case 'limits':
      return table(
        LIMIT_COLUMNS,
        block.rows.map(({ cells }) =>
          cells.map((text, i) => (i === POLICY_COLUMN && text !== '-' ? `\`${text}\`` : text)),
        ),
      );
    case 'fields':
      return table(['Header', 'Meaning'], block.rows);
    case 'code':
      return [`\`\`\`${block.language}`, block.code, '```'];
  }
}

/** The page as Markdown: its blocks, a blank line after each. */
export function limitsMarkdown(page: LimitsPage): string {
  return pageBlocks(page)
    .flatMap((block) => [...lines(block), ''])
    .join('\n');
}
