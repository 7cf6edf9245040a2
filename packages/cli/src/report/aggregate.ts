/** Would-be (shadow) and enforced denials of one rule, or of one rule and key. */
export interface DenialCounts {
  readonly rule: string;
  wouldBe: number;
  denied: number;
}

/** One hashed key's denials under one rule. */
export interface Offender extends DenialCounts {
  /** The counter tag as logged (hashed), or `(unknown)` for rules the logger did not know. */
  readonly key: string;
  first: number | undefined;
  last: number | undefined;
}

/** Everything `sluice report` prints, from decision log lines. */
export interface DenialReport {
  /** Decision lines read (other log lines are ignored). */
  decisions: number;
  /** Lines that were not JSON. */
  unreadable: number;
  from: number | undefined;
  to: number | undefined;
  /** Rules version -> decision lines made with it: more than one means mixed versions. */
  readonly versions: Map<string, number>;
  /** By rule, most denials first. */
  rules: DenialCounts[];
  /** By rule and key, most denials first. */
  offenders: Offender[];
  /** Start of each UTC hour from the first to the last denial (ms). */
  hours: number[];
  /** Rule -> denials (would-be and enforced) per hour, aligned with `hours`. */
  perHour: Map<string, number[]>;
}

const HOUR_MS = 3_600_000;

interface LoggedResult {
  readonly rule: string;
  readonly outcome: string;
  readonly key?: string;
}

/** A decision log line (see decisionLogObserver), or undefined for any other line. */
interface DecisionLine {
  readonly time: number | undefined;
  readonly version: string | undefined;
  readonly weight: number;
  readonly results: readonly LoggedResult[];
}

function timeOf(entry: Record<string, unknown>): number | undefined {
  const raw = entry.ts ?? entry.time;
  const time = typeof raw === 'string' ? Date.parse(raw) : raw;
  return typeof time === 'number' && Number.isFinite(time) ? time : undefined;
}

function decisionLine(entry: unknown): DecisionLine | undefined {
  if (entry === null || typeof entry !== 'object') return undefined;
  const e = entry as Record<string, unknown>;
  if (e.event !== 'sluice.decision' || !Array.isArray(e.results)) return undefined;
  const sample = typeof e.sample === 'number' && e.sample > 0 && e.sample <= 1 ? e.sample : 1;
  const results = (e.results as unknown[]).filter(
    (r): r is LoggedResult =>
      typeof r === 'object' && r !== null && typeof (r as LoggedResult).rule === 'string',
  );
  return {
    time: timeOf(e),
    version: typeof e.version === 'string' ? e.version : undefined,
    weight: 1 / sample,
    results,
  };
}

function bump(counts: DenialCounts, outcome: string, weight: number): void {
  if (outcome === 'shadow_denied') counts.wouldBe += weight;
  else counts.denied += weight;
}

const byTotal = (a: DenialCounts, b: DenialCounts) => b.wouldBe + b.denied - (a.wouldBe + a.denied);

/** Reads decision log lines one at a time (for files too large to hold), then builds the report. */
export interface DenialAggregator {
  add(text: string): void;
  finish(): DenialReport;
}

/**
 * Groups the denials in decision log lines (JSON, one per line) by rule, by rule and hashed key, and by hour.
 * Sampled lines count as 1 / sample decisions; lines that are not decisions are ignored.
 */
export function createDenialAggregator(): DenialAggregator {
  const report: DenialReport = {
    decisions: 0,
    unreadable: 0,
    from: undefined,
    to: undefined,
    versions: new Map(),
    rules: [],
    offenders: [],
    hours: [],
    perHour: new Map(),
  };
  const rules = new Map<string, DenialCounts>();
  const offenders = new Map<string, Offender>();
  const hourly = new Map<string, Map<number, number>>();

  function count(result: LoggedResult, line: DecisionLine): void {
    const rule = rules.get(result.rule) ?? { rule: result.rule, wouldBe: 0, denied: 0 };
    rules.set(result.rule, rule);
    bump(rule, result.outcome, line.weight);
    const key = result.key ?? '(unknown)';
    const id = JSON.stringify([result.rule, key]);
    const offender = offenders.get(id) ?? {
      rule: result.rule,
      key,
      wouldBe: 0,
      denied: 0,
      first: undefined,
      last: undefined,
    };
    offenders.set(id, offender);
    bump(offender, result.outcome, line.weight);
    if (line.time === undefined) return;
    offender.first = Math.min(offender.first ?? line.time, line.time);
    offender.last = Math.max(offender.last ?? line.time, line.time);
    report.from = Math.min(report.from ?? line.time, line.time);
    report.to = Math.max(report.to ?? line.time, line.time);
    const hour = Math.floor(line.time / HOUR_MS) * HOUR_MS;
    const perRule = hourly.get(result.rule) ?? new Map<number, number>();
    hourly.set(result.rule, perRule);
    perRule.set(hour, (perRule.get(hour) ?? 0) + line.weight);
  }

  function add(text: string): void {
    if (text.trim() === '') return;
    let line: DecisionLine | undefined;
    try {
      line = decisionLine(JSON.parse(text));
    } catch {
      report.unreadable++;
      return;
    }
    if (!line) return;
    report.decisions++;
    if (line.version) report.versions.set(line.version, (report.versions.get(line.version) ?? 0) + 1);
    for (const result of line.results) {
      if (result.outcome === 'shadow_denied' || result.outcome === 'denied') count(result, line);
    }
  }

  function finish(): DenialReport {
    report.rules = [...rules.values()].sort(byTotal);
    report.offenders = [...offenders.values()].sort(byTotal);
    report.hours = [];
    if (report.from !== undefined && report.to !== undefined) {
      const first = Math.floor(report.from / HOUR_MS) * HOUR_MS;
      for (let hour = first; hour <= report.to; hour += HOUR_MS) report.hours.push(hour);
    }
    for (const { rule } of report.rules) {
      const perRule = hourly.get(rule);
      report.perHour.set(
        rule,
        report.hours.map((hour) => perRule?.get(hour) ?? 0),
      );
    }
    return report;
  }

  return { add, finish };
}

/** {@link createDenialAggregator} over lines already in memory. */
export function aggregateDenials(lines: Iterable<string>): DenialReport {
  const aggregator = createDenialAggregator();
  for (const line of lines) aggregator.add(line);
  return aggregator.finish();
}

/** A UTC hour as `2026-01-02 13:00`. */
export function formatHour(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
}

/** A weighted count for display: whole numbers as they are, sampled estimates rounded. */
export function formatCount(count: number): string {
  return Number.isInteger(count) ? String(count) : `~${Math.round(count)}`;
}

/** The top offenders as table rows: rule, hashed key, would-be and enforced denials, first and last hour. */
export function offenderRows(report: DenialReport, top: number): string[][] {
  return report.offenders
    .slice(0, top)
    .map((o) => [
      o.rule,
      o.key,
      formatCount(o.wouldBe),
      formatCount(o.denied),
      o.first === undefined ? '' : formatHour(o.first),
      o.last === undefined ? '' : formatHour(o.last),
    ]);
}
