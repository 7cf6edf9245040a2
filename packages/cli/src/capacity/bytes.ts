import { UsageError } from '../io.js';

const UNITS: Readonly<Record<string, number>> = {
  b: 1,
  kb: 1024,
  mb: 1024 ** 2,
  gb: 1024 ** 3,
  tb: 1024 ** 4,
};

/** `512mb`, `4gb`, `1tb` (binary units, as Redis's maxmemory reads them) in bytes; a usage error otherwise. */
export function parseBytes(text: string, option: string): number {
  const found = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb|tb)$/i.exec(text.trim());
  const bytes = found ? Number(found[1]) * (UNITS[(found[2] ?? '').toLowerCase()] ?? 0) : 0;
  if (!(bytes >= 1)) throw new UsageError(`--${option} must be a size such as 512mb or 4gb, got "${text}"`);
  return bytes;
}

/** Bytes in the largest binary unit that keeps a number of at least 1: `1.9 GB`, `312 KB`. */
export function formatBytes(bytes: number): string {
  for (const unit of ['TB', 'GB', 'MB', 'KB'] as const) {
    const size = UNITS[unit.toLowerCase()] ?? 1;
    if (bytes >= size) return `${(bytes / size).toFixed(bytes / size >= 100 ? 0 : 1)} ${unit}`;
  }
  return `${Math.round(bytes)} B`;
}
