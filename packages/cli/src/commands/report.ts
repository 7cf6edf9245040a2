import { writeFile } from 'node:fs/promises';
import { countOption, parseCommandArgs, stringOption } from '../args.js';
import { type Command, describeFsError, EXIT, type Io, UsageError } from '../io.js';
import { lineMeter, sizeOf } from '../replay/feed.js';
import { logLines } from '../replay/lines.js';
import {
  createDenialAggregator,
  type DenialReport,
  formatCount,
  formatHour,
  offenderRows,
} from '../report/aggregate.js';
import { renderHtml } from '../report/html.js';

/** Columns padded to their widest cell. */
export function formatTable(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length);
  }
  return rows.map((row) =>
    row
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd(),
  );
}

/**
 * Every line of the decision logs (plain or gzip) into `add`, in order, counted on the progress line; the log
 * that could not be read, if one could not.
 */
async function readLogs(
  paths: readonly string[],
  add: (line: string) => void,
  io: Io,
): Promise<{ path: string; error: unknown } | undefined> {
  const positions = paths.map(() => ({ bytes: 0 }));
  const meter = lineMeter(io, paths, positions, await sizeOf(paths));
  try {
    for (const [i, path] of paths.entries()) {
      try {
        for await (const line of logLines(path, positions[i])) {
          meter.tick();
          add(line);
        }
      } catch (error) {
        return { path, error };
      }
    }
    return undefined;
  } finally {
    meter.end();
  }
}

function printReport(io: Io, report: DenialReport, top: number): void {
  const span =
    report.from === undefined || report.to === undefined
      ? ''
      : `, ${formatHour(report.from)} to ${formatHour(report.to)} UTC`;
  io.out(`${report.decisions} decisions read${span}`);
  if (report.versions.size > 1) {
    io.out(`mixed rules versions: ${[...report.versions].map(([v, n]) => `${v} (${n})`).join(', ')}`);
  }
  if (report.rules.length === 0) {
    io.out('no denials, would-be or enforced');
    return;
  }
  io.out('');
  io.out('By rule');
  const byRule = report.rules.map((r) => [r.rule, formatCount(r.wouldBe), formatCount(r.denied)]);
  for (const line of formatTable([['rule', 'would-be', 'denied'], ...byRule])) io.out(`  ${line}`);
  io.out('');
  io.out(`Top offenders (rule, hashed key)${report.offenders.length > top ? `, first ${top}` : ''}`);
  const offenders = offenderRows(report, top);
  const offenderHeader = ['rule', 'key', 'would-be', 'denied', 'first', 'last'];
  for (const line of formatTable([offenderHeader, ...offenders])) io.out(`  ${line}`);
  if (report.hours.length === 0) return;
  io.out('');
  io.out('Per hour (UTC), would-be and enforced; hours without denials left out');
  const rules = [...report.perHour.keys()];
  const rows = report.hours.flatMap((hour, i) => {
    const counts = rules.map((rule) => report.perHour.get(rule)?.[i] ?? 0);
    return counts.some((c) => c > 0) ? [[formatHour(hour), ...counts.map(formatCount)]] : [];
  });
  for (const line of formatTable([['hour', ...rules], ...rows])) io.out(`  ${line}`);
}

/** `sluice report <decision-log.jsonl>`: who would have been rejected, by rule, key and hour. */
export const reportCommand: Command = {
  name: 'report',
  summary: 'group would-be (shadow) and enforced denials from decision logs by rule, hashed key and hour',
  help: `Usage: sluice report <decision-log.jsonl>... [--html <out.html>] [--top <n>]

Reads decision logs written by decisionLogObserver (JSON lines; pino lines work as they are; other lines are
ignored) and groups denials by rule and by hashed key, top offenders first, with counts per hour. This is the
review step of a shadow rollout: a few keys with huge counts are usually abuse or a broken retry loop; a broad
spread across keys means the limit is too low for legitimate traffic. Sampled lines count as 1/sample (shown ~n).

Options:
  --html <file>   also write a self-contained HTML page with a chart of denials over time per rule
  --top <n>       offenders to list; default 20
  -h, --help      show this help

Exit codes: 0 reported, 2 usage error or unreadable file.`,
  async run(args, io) {
    const parsed = parseCommandArgs(args, { html: { type: 'string' }, top: { type: 'string' } });
    if (parsed.positionals.length === 0) throw new UsageError('report needs at least one decision log file');
    const top = countOption(parsed, 'top', 20);
    const aggregator = createDenialAggregator();
    const unreadable = await readLogs(parsed.positionals, aggregator.add, io);
    if (unreadable !== undefined) {
      io.err(describeFsError(unreadable.path, unreadable.error));
      return EXIT.usage;
    }
    const report = aggregator.finish();
    if (report.unreadable > 0) io.err(`warning: ${report.unreadable} lines were not JSON and were skipped`);
    printReport(io, report, top);
    const html = stringOption(parsed, 'html');
    if (html !== undefined) {
      try {
        await writeFile(html, renderHtml(report, `Sluice denials: ${parsed.positionals.join(', ')}`, top));
      } catch (error) {
        io.err(describeFsError(html, error));
        return EXIT.usage;
      }
      io.out(`wrote ${html}`);
    }
    return EXIT.ok;
  },
};
