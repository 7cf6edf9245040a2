import { UsageError } from '../io.js';

/** A dotted path into a JSON log line (`headers.x-api-key`), split once. */
export type FieldPath = readonly string[];

/** Where log lines keep each request fact; for JSON the first path present wins. */
export interface FieldMap {
  readonly ip: readonly FieldPath[];
  readonly time: readonly FieldPath[];
  readonly method: readonly FieldPath[];
  readonly path: readonly FieldPath[];
  readonly status: readonly FieldPath[];
  readonly apiKey: readonly FieldPath[];
  /** The app's own descriptors (tenant, plan, ...) by descriptor name; the first path present wins. */
  readonly extra: ReadonlyMap<string, readonly FieldPath[]>;
}

const split = (path: string): FieldPath => path.split('.');

/** Field names common in nginx `log_format ... escape=json`, Envoy, pino and ALB-style JSON logs. */
export const DEFAULT_FIELDS: FieldMap = {
  ip: ['ip', 'remote_addr', 'client_ip', 'remote_ip', 'clientIp'].map(split),
  time: ['time', 'timestamp', '@timestamp', 'ts', 'time_iso8601', 'time_local'].map(split),
  method: ['method', 'request_method'].map(split),
  path: ['path', 'request_uri', 'uri', 'url'].map(split),
  status: ['status', 'status_code', 'statusCode'].map(split),
  apiKey: ['api_key', 'http_x_api_key', 'headers.x-api-key'].map(split),
  extra: new Map(),
};

const BUILT_IN: Readonly<Record<string, Exclude<keyof FieldMap, 'extra'>>> = {
  ip: 'ip',
  time: 'time',
  method: 'method',
  path: 'path',
  status: 'status',
  api_key: 'apiKey',
};

const DESCRIPTOR_NAME = /^[a-z][a-z0-9_]*$/;

/**
 * The field map after `--field name=path` options: paths for `ip`, `time`, `method`, `path`, `status` and
 * `api_key` are tried before the defaults; any other name (`tenant=headers.x-tenant`) becomes a descriptor of
 * that name. A name given twice tries both paths, so one set of options reads combined and JSON logs alike. In
 * combined logs, `extra.N` is the N-th quoted field after the user agent (`log_format` additions such as
 * `"$http_x_api_key"`).
 */
export function fieldMap(options: readonly string[]): FieldMap {
  const map = { ...DEFAULT_FIELDS, extra: new Map<string, FieldPath[]>() };
  const given = new Map<string, FieldPath[]>();
  for (const option of options) {
    const eq = option.indexOf('=');
    const name = option.slice(0, eq);
    const path = option.slice(eq + 1);
    if (eq < 1 || path === '' || !DESCRIPTOR_NAME.test(name)) {
      throw new UsageError(
        `--field must be name=path (a descriptor name, a dotted field path), got "${option}"`,
      );
    }
    given.set(name, [...(given.get(name) ?? []), split(path)]);
  }
  for (const [name, paths] of given) {
    const builtIn = BUILT_IN[name];
    if (builtIn) map[builtIn] = [...paths, ...DEFAULT_FIELDS[builtIn]];
    else map.extra.set(name, paths);
  }
  return map;
}

/** The value at a path, or undefined. */
export function valueAt(entry: unknown, path: FieldPath): unknown {
  let value = entry;
  for (const part of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** The value of the first path present (not undefined, null or ''). */
export function firstAt(entry: unknown, paths: readonly FieldPath[]): unknown {
  for (const path of paths) {
    const value = valueAt(entry, path);
    if (value !== undefined && value !== null && value !== '') return value;
  }
  return undefined;
}
