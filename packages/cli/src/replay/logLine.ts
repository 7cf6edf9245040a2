import type { Descriptors } from '@sluice/core';
import type { DescriptorSettings } from '@sluice/core/http';
import { type FieldMap, type FieldPath, firstAt, valueAt } from './fields.js';
import { cachedTimeParser, parseLogTime, parseTimeLocal } from './logTime.js';
import { descriptorsOf, type ReplayRequest } from './request.js';

/** Log formats `sluice replay` reads; `auto` tells them apart line by line. */
export const LOG_FORMATS = ['auto', 'combined', 'json', 'decisions'] as const;

/** One of {@link LOG_FORMATS}. */
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Why a line gave no request: `ignored` (another kind of log line), `unreadable` (garbled, no time or path). */
export type Skipped = 'ignored' | 'unreadable';

/** Turns one log line into a request. */
export type LineParser = (line: string) => ReplayRequest | Skipped;

/** `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent` and the rest of the line. */
const COMBINED = /^(\S+) \S+ \S+ \[([^\]]+)\] "([^"\\]*(?:\\.[^"\\]*)*)" (\d{3}|-) \S+(.*)$/;

/** The first `count` quoted fields of the rest of a combined line (referer, user agent, then additions). */
function quotedFields(rest: string, count: number): string[] {
  const fields: string[] = [];
  let at = rest.indexOf('"');
  while (at !== -1 && fields.length < count) {
    let end = at + 1;
    // A backslash escapes the next character (Apache writes \" inside a field; nginx writes \x22).
    while (end < rest.length && rest.charCodeAt(end) !== 34) end += rest.charCodeAt(end) === 92 ? 2 : 1;
    fields.push(rest.slice(at + 1, end));
    at = rest.indexOf('"', end + 1);
  }
  return fields;
}

/** `GET /path HTTP/1.1` as method and target, or undefined for a garbled request line. */
function requestLine(text: string): { method: string; path: string } | undefined {
  const first = text.indexOf(' ');
  if (first < 1) return undefined;
  const second = text.indexOf(' ', first + 1);
  const path = second === -1 ? text.slice(first + 1) : text.slice(first + 1, second);
  return path === '' ? undefined : { method: text.slice(0, first), path };
}

/** The 1-based index of an `extra.N` path (a quoted field after the user agent), else undefined. */
function extraIndex(path: FieldPath): number | undefined {
  if (path.length !== 2 || path[0] !== 'extra') return undefined;
  const n = Number(path[1]);
  return Number.isSafeInteger(n) && n >= 1 ? n : undefined;
}

function firstExtra(paths: readonly FieldPath[]): number | undefined {
  for (const path of paths) {
    const n = extraIndex(path);
    if (n !== undefined) return n;
  }
  return undefined;
}

/** A quoted field's value; nginx writes `-` for an empty one. */
function quotedValue(quoted: readonly string[], extra: number | undefined): string | undefined {
  if (extra === undefined) return undefined;
  const value = quoted[extra + 1];
  return value === undefined || value === '-' || value === '' ? undefined : value;
}

/** The app's descriptors found in a line, or undefined when none is (most lines: no object made). */
function collect<W>(
  where: Iterable<readonly [string, W]>,
  read: (where: W) => string | undefined,
): Record<string, string> | undefined {
  let found: Record<string, string> | undefined;
  for (const [name, at] of where) {
    const value = read(at);
    if (value === undefined) continue;
    found ??= {};
    found[name] = value;
  }
  return found;
}

/** Parser of nginx / Apache combined lines, with `extra.N` mappings for appended quoted fields. */
export function combinedParser(fields: FieldMap, settings: DescriptorSettings): LineParser {
  const time = cachedTimeParser(parseTimeLocal);
  const ipExtra = firstExtra(fields.ip);
  const keyExtra = firstExtra(fields.apiKey);
  const extras = [...fields.extra].flatMap(([name, paths]) => {
    const n = firstExtra(paths);
    return n === undefined ? [] : [[name, n] as const];
  });
  // Referer and user agent come first: extra.N is quoted field N + 2.
  const quotedNeeded = 2 + Math.max(0, ipExtra ?? 0, keyExtra ?? 0, ...extras.map(([, n]) => n));
  return (line) => {
    const m = COMBINED.exec(line);
    if (!m) return 'unreadable';
    const at = time(m[2] ?? '');
    const request = requestLine(m[3] ?? '');
    if (at === undefined || request === undefined) return 'unreadable';
    const quoted = quotedNeeded > 2 ? quotedFields(m[5] ?? '', quotedNeeded) : [];
    const extra = collect(extras, (n) => quotedValue(quoted, n));
    const descriptors = descriptorsOf(
      {
        ip: quotedValue(quoted, ipExtra) ?? m[1],
        method: request.method,
        path: request.path,
        apiKey: quotedValue(quoted, keyExtra),
        extra,
      },
      settings,
    );
    const status = m[4] === '-' ? undefined : Number(m[4]);
    return status === undefined ? { time: at, descriptors } : { time: at, descriptors, status };
  };
}

const asText = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;

/** A JSON access log line read through the field map; undefined when it has no time or no path. */
function jsonRequest(
  entry: object,
  fields: FieldMap,
  settings: DescriptorSettings,
): ReplayRequest | undefined {
  const time = parseLogTime(firstAt(entry, fields.time));
  let method = asText(firstAt(entry, fields.method));
  let path = asText(firstAt(entry, fields.path));
  if (path === undefined) {
    // nginx's `$request` ("GET /x HTTP/1.1") when the method and URI are not logged apart.
    const request = requestLine(asText(valueAt(entry, ['request'])) ?? '');
    method ??= request?.method;
    path = request?.path;
  }
  if (time === undefined || path === undefined) return undefined;
  const extra = collect(fields.extra, (paths) => asText(firstAt(entry, paths)));
  const descriptors = descriptorsOf(
    {
      ip: asText(firstAt(entry, fields.ip)),
      method: method ?? 'GET',
      path,
      apiKey: asText(firstAt(entry, fields.apiKey)),
      extra,
    },
    settings,
  );
  const status = Number(firstAt(entry, fields.status));
  return Number.isInteger(status) ? { time, descriptors, status } : { time, descriptors };
}

/**
 * A Sluice decision log line: its descriptors as logged (hashed, except the names logged in clear), so rules
 * keyed on them count alike, while rules matching a literal value only match descriptors logged in clear.
 */
function decisionRequest(entry: Record<string, unknown>): ReplayRequest | Skipped {
  const time = parseLogTime(entry.ts ?? entry.time);
  const logged = entry.descriptors;
  if (time === undefined || logged === null || typeof logged !== 'object') return 'unreadable';
  const descriptors: Record<string, string> = {};
  for (const [name, value] of Object.entries(logged))
    if (typeof value === 'string') descriptors[name] = value;
  return { time, descriptors: descriptors as Descriptors };
}

/** Parser of JSON lines: decision logs (event `sluice.decision`) and access logs through the field map. */
export function jsonParser(fields: FieldMap, settings: DescriptorSettings, only?: 'decisions'): LineParser {
  return (line) => {
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch {
      return 'unreadable';
    }
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return 'unreadable';
    const event = (entry as { event?: unknown }).event;
    if (event === 'sluice.decision') return decisionRequest(entry as Record<string, unknown>);
    // Sluice's other lines (rules loaded, store errors) are not requests.
    if (only === 'decisions' || (typeof event === 'string' && event.startsWith('sluice.'))) return 'ignored';
    return jsonRequest(entry, fields, settings) ?? 'unreadable';
  };
}

/** The parser for a format; `auto` reads lines starting with `{` as JSON and the rest as combined. */
export function lineParser(format: LogFormat, fields: FieldMap, settings: DescriptorSettings): LineParser {
  const combined = combinedParser(fields, settings);
  const json = jsonParser(fields, settings, format === 'decisions' ? 'decisions' : undefined);
  if (format === 'combined') return combined;
  if (format === 'json' || format === 'decisions') return json;
  return (line) => (line.charCodeAt(0) === 123 /* { */ ? json(line) : combined(line));
}
