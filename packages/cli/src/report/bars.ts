import { colourOf, escapeHtml } from './html.js';

/** One row of a bar chart: a label and its stacked parts, one per series. */
export interface BarRow {
  readonly label: string;
  readonly parts: readonly number[];
}

const BAR = { width: 900, row: 22, label: 260, right: 80, top: 8 };

/** Labels longer than this are cut (keys can be long); the full text is in the bar's tooltip. */
const MAX_LABEL = 38;

/**
 * An inline SVG chart of horizontal stacked bars, one row per label, scaled to the largest row total; each row
 * ends with its total. `aria-label` names the chart for screen readers and tests.
 */
export function barChart(rows: readonly BarRow[], series: readonly string[], title: string): string {
  const { width, row, label, right, top } = BAR;
  const plot = width - label - right;
  const height = top * 2 + Math.max(1, rows.length) * row;
  const totals = rows.map((r) => r.parts.reduce((sum, part) => sum + part, 0));
  const max = Math.max(1, ...totals);
  const bars = rows.map((r, i) => {
    const y = top + i * row;
    let x = label;
    const rects = r.parts.map((part, s) => {
      const w = (part / max) * plot;
      const rect = `<rect x="${x.toFixed(1)}" y="${y + 3}" width="${w.toFixed(1)}" height="${row - 6}" fill="${colourOf(s)}"><title>${escapeHtml(`${r.label}: ${series[s] ?? ''} ${part}`)}</title></rect>`;
      x += w;
      return rect;
    });
    const text = r.label.length > MAX_LABEL ? `${r.label.slice(0, MAX_LABEL - 1)}…` : r.label;
    return [
      `<text x="${label - 8}" y="${y + row / 2 + 4}" text-anchor="end">${escapeHtml(text)}</text>`,
      ...rects,
      `<text x="${(x + 6).toFixed(1)}" y="${y + row / 2 + 4}">${totals[i] ?? 0}</text>`,
    ].join('');
  });
  const empty = rows.length === 0 ? `<text x="${label}" y="${top + row / 2 + 4}">nothing to show</text>` : '';
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeHtml(title)}">`,
    `<line x1="${label}" y1="${top}" x2="${label}" y2="${height - top}" stroke="#999"/>`,
    ...bars,
    empty,
    '</svg>',
  ].join('\n');
}
