const MONTHS: Readonly<Record<string, number>> = {
  Jan: 0,
  Feb: 1,
  Mar: 2,
  Apr: 3,
  May: 4,
  Jun: 5,
  Jul: 6,
  Aug: 7,
  Sep: 8,
  Oct: 9,
  Nov: 10,
  Dec: 11,
};

const TIME_LOCAL = /^(\d{2})\/([A-Z][a-z]{2})\/(\d{4}):(\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2})$/;

/** nginx / Apache `$time_local` (`10/Oct/2026:13:55:36 +0200`) as epoch ms, or undefined. */
export function parseTimeLocal(text: string): number | undefined {
  const m = TIME_LOCAL.exec(text);
  const month = m ? MONTHS[m[2] ?? ''] : undefined;
  if (!m || month === undefined) return undefined;
  const utc = Date.UTC(Number(m[3]), month, Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6]));
  const offset = (Number(m[8]) * 60 + Number(m[9])) * 60_000;
  return m[7] === '-' ? utc + offset : utc - offset;
}

/**
 * A log time as epoch ms: numbers above 1e11 are ms, smaller ones seconds (Unix time, fractions kept);
 * text is `$time_local` or anything Date.parse reads (ISO 8601). Undefined when it is none of these.
 */
export function parseLogTime(value: unknown): number | undefined {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value <= 0) return undefined;
    return value > 1e11 ? value : Math.round(value * 1000);
  }
  if (typeof value !== 'string') return undefined;
  const local = parseTimeLocal(value);
  if (local !== undefined) return local;
  if (/^\d+(\.\d+)?$/.test(value)) return parseLogTime(Number(value));
  const parsed = Date.parse(value);
  return Number.isNaN(parsed) ? undefined : parsed;
}

/** Remembers the last text parsed: consecutive log lines mostly share a second. */
export function cachedTimeParser(
  parse: (text: string) => number | undefined,
): (text: string) => number | undefined {
  let lastText = '';
  let lastTime: number | undefined;
  return (text) => {
    if (text !== lastText) {
      lastText = text;
      lastTime = parse(text);
    }
    return lastTime;
  };
}
