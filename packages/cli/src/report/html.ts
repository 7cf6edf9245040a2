import { type DenialReport, formatCount, formatHour, offenderRows } from './aggregate.js';

const COLOURS = ['#d62728', '#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#17becf'];
const CHART = { width: 900, height: 320, left: 56, right: 16, top: 16, bottom: 48 };

/** Escapes text for HTML content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The colour of series `index` in every chart. */
export function colourOf(index: number): string {
  return COLOURS[index % COLOURS.length] ?? '#333';
}

/** An inline SVG line chart of denials (would-be and enforced) per hour, one line per rule. */
export function denialChart(report: Pick<DenialReport, 'hours' | 'perHour'>): string {
  const { width, height, left, right, top, bottom } = CHART;
  const plotWidth = width - left - right;
  const plotHeight = height - top - bottom;
  const series = [...report.perHour.entries()];
  const max = Math.max(1, ...series.flatMap(([, counts]) => counts));
  const steps = Math.max(1, report.hours.length - 1);
  const x = (i: number) => left + (report.hours.length === 1 ? plotWidth / 2 : (i / steps) * plotWidth);
  const y = (count: number) => top + plotHeight - (count / max) * plotHeight;
  const lines = series.map(([rule, counts], index) => {
    const points = counts.map((count, i) => `${x(i).toFixed(1)},${y(count).toFixed(1)}`).join(' ');
    const dots =
      counts.length === 1
        ? `<circle cx="${x(0)}" cy="${y(counts[0] ?? 0)}" r="3" fill="${colourOf(index)}"/>`
        : '';
    return `<polyline fill="none" stroke="${colourOf(index)}" stroke-width="2" points="${points}"><title>${escapeHtml(rule)}</title></polyline>${dots}`;
  });
  const xTicks = hourTicks(report.hours.length).map((i) => {
    // The last label ends at the plot's edge: centred there, its right half was cut off by the frame.
    const anchor = i > 0 && i === report.hours.length - 1 ? 'end' : 'middle';
    const label = escapeHtml(formatHour(report.hours[i] ?? 0).slice(5));
    return `<text x="${x(i).toFixed(1)}" y="${height - bottom + 18}" text-anchor="${anchor}">${label}</text>`;
  });
  const yTicks = [0, max / 2, max].map(
    (v) =>
      `<text x="${left - 8}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${formatCount(Math.round(v))}</text>`,
  );
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" role="img" aria-label="Denials per hour by rule">`,
    `<line x1="${left}" y1="${top + plotHeight}" x2="${width - right}" y2="${top + plotHeight}" stroke="#999"/>`,
    `<line x1="${left}" y1="${top}" x2="${left}" y2="${top + plotHeight}" stroke="#999"/>`,
    ...yTicks,
    ...xTicks,
    ...lines,
    `<text x="${left + plotWidth / 2}" y="${height - 8}" text-anchor="middle">hour (UTC)</text>`,
    '</svg>',
  ].join('\n');
}

/**
 * The hours that get a label, at most about 8: every n-th from the first, and always the last (the end of the
 * data), without the n-th one before it when the two would crowd each other.
 */
export function hourTicks(count: number): number[] {
  if (count === 0) return [];
  const every = Math.max(1, Math.ceil(count / 8));
  const last = count - 1;
  const ticks: number[] = [];
  for (let i = 0; i < last; i += every) if (last - i >= every) ticks.push(i);
  ticks.push(last);
  return ticks;
}

/** An HTML table of text cells (escaped). */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const head = headers.map((h) => `<th>${escapeHtml(h)}</th>`).join('');
  const body = rows.map((row) => `<tr>${row.map((cell) => `<td>${escapeHtml(cell)}</td>`).join('')}</tr>`);
  return `<table><thead><tr>${head}</tr></thead><tbody>${body.join('')}</tbody></table>`;
}

/** The stylesheet of every report page, inline (the page loads nothing). */
export const PAGE_STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}
th{background:#f3f3f3}td:nth-child(n+3){text-align:right;font-variant-numeric:tabular-nums}
svg{max-width:100%;font-size:11px}.key{margin-right:1em}.key i{display:inline-block;width:12px;height:12px;margin-right:4px}
`;

/** The legend of a chart's series, in the charts' colours. */
export function legend(names: readonly string[]): string {
  return names
    .map((name, i) => `<span class="key"><i style="background:${colourOf(i)}"></i>${escapeHtml(name)}</span>`)
    .join(' ');
}

/** The report as one self-contained HTML page (no scripts, no external files). */
export function renderHtml(report: DenialReport, title: string, top: number): string {
  const span =
    report.from === undefined || report.to === undefined
      ? 'no timed denials'
      : `${formatHour(report.from)} to ${formatHour(report.to)} UTC`;
  const versions = [...report.versions.entries()].map(([v, n]) => `${v} (${n})`).join(', ') || 'none';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>${PAGE_STYLE}</style></head><body>
<h1>${escapeHtml(title)}</h1>
<p>${report.decisions} decisions read, ${span}. Rules versions seen: ${escapeHtml(versions)}.
Would-be denials come from shadow rules and keys outside a rollout; keys are hashed counter tags (see <code>sluice explain</code>).</p>
<h2>Denials per hour</h2>
<p>${legend([...report.perHour.keys()])}</p>
${denialChart(report)}
<h2>By rule</h2>
${table(
  ['rule', 'would-be denials', 'denied'],
  report.rules.map((r) => [r.rule, formatCount(r.wouldBe), formatCount(r.denied)]),
)}
<h2>Top offenders</h2>
${table(['rule', 'key (hashed)', 'would-be denials', 'denied', 'first', 'last'], offenderRows(report, top))}
</body></html>
`;
}
