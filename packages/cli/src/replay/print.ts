import { formatTable } from '../commands/report.js';
import type { Io } from '../io.js';
import { formatHour } from '../report/aggregate.js';
import { countOf, formatDuration } from '../rulesFile.js';
import type { ComparisonReport, Transition } from './compare.js';
import type { AccuracyReport, ReplayReport, RuleReport } from './report.js';
import { RETRY_AFTER_LABELS } from './retryAfter.js';

/** `12.34%` of a whole, `0%` of nothing. */
export function percent(part: number, whole: number): string {
  return whole === 0 ? '0%' : `${((100 * part) / whole).toFixed(2)}%`;
}

function indent(io: Io, rows: readonly (readonly string[])[], depth = '    '): void {
  for (const line of formatTable(rows)) io.out(`${depth}${line}`);
}

/** The first lines: what was read, over which span, and what could not be read. */
export function printSummary(io: Io, report: ReplayReport, source: string): void {
  const span =
    report.from === undefined || report.to === undefined
      ? ''
      : `, ${formatHour(report.from)} to ${formatHour(report.to)} UTC`;
  io.out(`${source}: ${countOf(report.requests, 'request')}${span}`);
  io.out(
    `rules ${report.domain} version ${report.version}: ${report.denied} requests denied (${percent(report.denied, report.requests)})`,
  );
  if (report.logged429 > 0) io.out(`the log shows ${report.logged429} answered 429 at the time`);
  if (report.unreadable > 0) io.err(`warning: ${countOf(report.unreadable, 'unreadable line')} skipped`);
  if (report.outOfOrder > 0) {
    io.err(
      `warning: ${countOf(report.outOfOrder, 'request')} earlier than one already read: give logs oldest first`,
    );
  }
}

function ruleLine(rule: RuleReport): string[] {
  return [
    rule.rule,
    rule.algorithm,
    rule.mode,
    String(rule.matched),
    String(rule.distinctKeys),
    String(rule.denied),
    String(rule.wouldBe),
  ];
}

function printAccuracy(io: Io, rule: RuleReport, accuracy: AccuracyReport): void {
  const errors = accuracy.falseAllows + accuracy.falseDenials;
  io.out(
    `  accuracy against the exact sliding log (${formatDuration(rule.windowMs)}, judged on the same admitted requests):`,
  );
  io.out(
    `    ${accuracy.judged} judged: ${accuracy.falseAllows} false allows, ${accuracy.falseDenials} false denials (${percent(errors, accuracy.judged)}), ${countOf(accuracy.keysWithErrors, 'key')} with errors; most in one window ${accuracy.peak} of ${rule.limit}`,
  );
  const worst = accuracy.worst;
  if (worst !== undefined) {
    io.out(
      `    worst key ${worst.key}: ${worst.falseAllows} false allows, ${worst.falseDenials} false denials of ${worst.matched}; most in one window ${worst.peak}`,
    );
  }
}

function printRule(io: Io, report: ReplayReport, rule: RuleReport): void {
  io.out('');
  io.out(
    `${rule.rule} (${rule.limit} per ${formatDuration(rule.windowMs)}, ${rule.algorithm}, ${rule.mode})`,
  );
  if (rule.matched === 0) {
    io.out('  matched no request');
    return;
  }
  if (rule.topKeys.length > 0) {
    io.out('  top keys by denials');
    indent(io, [
      ['key', 'matched', 'denied', 'would-be'],
      ...rule.topKeys.map((k) => [k.key, String(k.matched), String(k.denied), String(k.wouldBe)]),
    ]);
    const hours = report.hours.flatMap((hour, i) => {
      const denied = rule.deniedPerHour[i] ?? 0;
      const wouldBe = rule.wouldBePerHour[i] ?? 0;
      return denied + wouldBe > 0 ? [[formatHour(hour), String(denied), String(wouldBe)]] : [];
    });
    io.out('  denials per hour (UTC)');
    indent(io, [['hour', 'denied', 'would-be'], ...hours]);
    io.out('  Retry-After of denials');
    const buckets = RETRY_AFTER_LABELS.flatMap((label, i) =>
      (rule.retryAfter[i] ?? 0) > 0 ? [[label, String(rule.retryAfter[i])]] : [],
    );
    indent(io, buckets);
  } else {
    io.out('  no denials');
  }
  if (rule.accuracy) printAccuracy(io, rule, rule.accuracy);
}

/** The replay report as text: a table of rules, then each rule's keys, hours, Retry-After and accuracy. */
export function printReplay(io: Io, report: ReplayReport, source: string): void {
  printSummary(io, report, source);
  io.out('');
  indent(
    io,
    [['rule', 'algorithm', 'mode', 'matched', 'keys', 'denied', 'would-be'], ...report.rules.map(ruleLine)],
    '  ',
  );
  for (const rule of report.rules) printRule(io, report, rule);
}

function transitionText(transitions: readonly Transition[]): string {
  return transitions.map((t) => `${t.from} -> ${t.to} ${t.count}`).join(', ');
}

/** The comparison as text: requests whose outcome changed, then by rule and by key. */
export function printComparison(io: Io, report: ComparisonReport, names: { old: string; new: string }): void {
  printSummary(io, report.new, 'replayed');
  io.out(`old: ${names.old} (version ${report.old.version}, ${report.old.denied} denied)`);
  io.out(`new: ${names.new} (version ${report.new.version}, ${report.new.denied} denied)`);
  io.out(
    `${report.changed} of ${report.new.requests} requests change outcome (${percent(report.changed, report.new.requests)})`,
  );
  if (report.transitions.length > 0)
    indent(
      io,
      report.transitions.map((t) => [`${t.from} -> ${t.to}`, String(t.count)]),
      '  ',
    );
  io.out('');
  io.out('By rule (outcomes of the rule itself)');
  indent(
    io,
    [
      ['rule', 'version', 'changed', 'how'],
      ...report.rules.map((r) => [r.rule, r.status, String(r.changed), transitionText(r.transitions)]),
    ],
    '  ',
  );
  for (const rule of report.rules) {
    if (rule.topKeys.length === 0) continue;
    io.out('');
    io.out(`${rule.rule}: keys with the most changed outcomes`);
    indent(io, [
      ['key', 'changed', 'how'],
      ...rule.topKeys.map((k) => [k.key, String(k.changed), transitionText(k.transitions)]),
    ]);
  }
}
