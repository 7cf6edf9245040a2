import type { ComparisonReport } from '../replay/compare.js';
import { percent } from '../replay/print.js';
import type { ReplayReport, RuleReport } from '../replay/report.js';
import { RETRY_AFTER_LABELS } from '../replay/retryAfter.js';
import { formatDuration } from '../rulesFile.js';
import { formatHour } from './aggregate.js';
import { barChart } from './bars.js';
import { denialChart, escapeHtml, legend, PAGE_STYLE, table } from './html.js';

function overTime(report: ReplayReport): string {
  const perHour = new Map(
    report.rules.map((r) => [
      r.rule,
      r.deniedPerHour.map((denied, i) => denied + (r.wouldBePerHour[i] ?? 0)),
    ]),
  );
  return `<h2>Denials per hour, enforced and would-be</h2>
<p>${legend([...perHour.keys()])}</p>
${denialChart({ hours: [...report.hours], perHour })}`;
}

function accuracy(report: ReplayReport): string {
  const judged = report.rules.filter((r) => r.accuracy !== undefined);
  if (judged.length === 0) return '';
  const rows = judged.map((r) => ({
    label: r.rule,
    parts: [r.accuracy?.falseAllows ?? 0, r.accuracy?.falseDenials ?? 0],
  }));
  const cells = judged.map((r) => {
    const a = r.accuracy;
    const errors = (a?.falseAllows ?? 0) + (a?.falseDenials ?? 0);
    return [
      r.rule,
      r.algorithm,
      String(a?.judged ?? 0),
      String(a?.falseAllows ?? 0),
      String(a?.falseDenials ?? 0),
      percent(errors, a?.judged ?? 0),
      `${a?.peak ?? 0} of ${r.limit}`,
      a?.worst ? `${a.worst.key} (${a.worst.falseAllows + a.worst.falseDenials})` : '',
    ];
  });
  return `<h2>Error of the estimate against the exact sliding log</h2>
<p>Each request is judged by the rule and by an exact log of the same admitted requests. A false allow let a
request through while the exact window was full (fixed windows: the boundary burst); a false denial refused one
while it had room.</p>
<p>${legend(['false allows', 'false denials'])}</p>
${barChart(rows, ['false allows', 'false denials'], 'Error of the estimate by rule')}
${table(['rule', 'algorithm', 'judged', 'false allows', 'false denials', 'error', 'most in one window', 'worst key (errors)'], cells)}`;
}

function ruleSection(rule: RuleReport): string {
  const head = `<h3>${escapeHtml(rule.rule)}</h3>
<p>${rule.limit} per ${formatDuration(rule.windowMs)}, ${escapeHtml(rule.algorithm)}, ${rule.mode}: ${rule.matched} matched,
${rule.distinctKeys} keys, ${rule.denied} denied, ${rule.wouldBe} would-be denials.</p>`;
  if (rule.topKeys.length === 0) return head;
  const keys = rule.topKeys.map((k) => ({ label: k.key, parts: [k.denied, k.wouldBe] }));
  const retry = RETRY_AFTER_LABELS.map((label, i) => ({ label, parts: [rule.retryAfter[i] ?? 0] }));
  return `${head}
<p>Top keys by denials: ${legend(['denied', 'would-be'])}</p>
${barChart(keys, ['denied', 'would-be'], `Top keys by denials: ${rule.rule}`)}
<p>Retry-After of the denials</p>
${barChart(retry, ['denials'], `Retry-After distribution: ${rule.rule}`)}`;
}

function comparison(report: ComparisonReport | undefined): string {
  if (report === undefined) return '';
  const rows = report.rules.map((r) => ({ label: r.rule, parts: [r.changed] }));
  return `<h2>Outcomes changed between the two versions</h2>
<p>${report.changed} of ${report.new.requests} requests change outcome (${percent(report.changed, report.new.requests)}):
${escapeHtml(report.transitions.map((t) => `${t.from} → ${t.to} ${t.count}`).join(', ') || 'none')}.
Versions ${escapeHtml(report.old.version)} → ${escapeHtml(report.new.version)}.</p>
${barChart(rows, ['changed'], 'Changed outcomes by rule')}
${table(
  ['rule', 'version', 'changed', 'how'],
  report.rules.map((r) => [
    r.rule,
    r.status,
    String(r.changed),
    r.transitions.map((t) => `${t.from} → ${t.to} ${t.count}`).join(', '),
  ]),
)}`;
}

/**
 * A replay (and, with `--compare`, the comparison) as one self-contained HTML page: inline styles and SVG charts,
 * no script and no external file, so it opens offline and can be attached to a pull request.
 */
export function renderReplayHtml(report: ReplayReport, title: string, compared?: ComparisonReport): string {
  const span =
    report.from === undefined || report.to === undefined
      ? 'no requests'
      : `${formatHour(report.from)} to ${formatHour(report.to)} UTC`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>${PAGE_STYLE}</style></head><body>
<h1>${escapeHtml(title)}</h1>
<p>${report.requests} requests, ${span}; rules ${escapeHtml(report.domain)} version ${escapeHtml(report.version)};
${report.denied} denied (${percent(report.denied, report.requests)}). Keys are counter tags unless the replay ran
with <code>--show-keys</code>.</p>
${comparison(compared)}
${overTime(report)}
${table(
  ['rule', 'algorithm', 'mode', 'matched', 'keys', 'denied', 'would-be'],
  report.rules.map((r) => [
    r.rule,
    r.algorithm,
    r.mode,
    String(r.matched),
    String(r.distinctKeys),
    String(r.denied),
    String(r.wouldBe),
  ]),
)}
${accuracy(report)}
<h2>Rules</h2>
${report.rules.map(ruleSection).join('\n')}
</body></html>
`;
}
