import type { HeaderSource } from './headerSource.js';
import type { UndiciHeaderValues } from './undiciTypes.js';

/** Any form undici takes headers in (object, flat array, iterable of pairs), as a lower-cased object. */
export function headerRecord(headers: unknown): Record<string, string | string[]> {
  const record: Record<string, string | string[]> = {};
  const add = (name: unknown, value: unknown): void => {
    if (value === undefined || value === null) return;
    const key = String(name).toLowerCase();
    const values = Array.isArray(value) ? value.map(String) : [String(value)];
    const known = record[key];
    record[key] =
      known === undefined ? (values.length === 1 ? values[0]! : values) : [...[known].flat(), ...values];
  };
  if (headers === undefined || headers === null) return record;
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) add(headers[i], headers[i + 1]);
  } else if (typeof headers === 'object' && Symbol.iterator in headers) {
    for (const [name, value] of headers as Iterable<[unknown, unknown]>) add(name, value);
  } else if (typeof headers === 'object') {
    for (const [name, value] of Object.entries(headers)) add(name, value);
  }
  return record;
}

/** Answer headers read the way the attempt logic reads a `Headers`. */
export function headerSource(headers: UndiciHeaderValues): HeaderSource {
  return {
    get(name) {
      const value = headers[name];
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
    },
  };
}
