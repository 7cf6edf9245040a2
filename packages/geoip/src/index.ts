import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ConfigError, checkOptionNames } from '@sluice/core';
import type { AddressDescriptors } from '@sluice/core/http';
import { Reader, type Response } from 'mmdb-lib';

/** The descriptors a GeoIP database gives, by the names rules use. */
export const GEOIP_DESCRIPTORS = ['asn', 'as_org', 'country'] as const;

/** The value of each descriptor an address has no entry for (a private address, a range the file lacks). */
export const UNKNOWN = 'unknown';

/** A database that cannot be used: missing, unreadable or not an MMDB file. */
export class GeoipError extends Error {
  readonly code = 'ERR_SLUICE_GEOIP';
  /** The database file. */
  readonly path: string;

  constructor(path: string, message: string, options?: { cause?: unknown }) {
    super(`GeoIP database ${path}: ${message}`, options);
    this.name = 'GeoipError';
    this.path = path;
  }
}

/** Options of {@link geoipDescriptors}. */
export interface GeoipOptions {
  /** MMDB files (an ASN database, a country database, or one with both); each field from the first that has it. */
  readonly databases: readonly string[];
  /** How often a file is checked for a change, ms; default 1000. */
  readonly pollMs?: number;
  /** Told of a reload that failed (the last good database stays in force) and of a lookup that failed. */
  readonly onError?: (error: GeoipError) => void;
  /** Told of each database put in force by a reload. */
  readonly onReload?: (path: string) => void;
}

const OPTION_NAMES = ['databases', 'pollMs', 'onError', 'onReload'];

/** The `addressDescriptors` option of every adapter, reading `asn`, `as_org` and `country`. */
export interface GeoipDescriptors extends AddressDescriptors {
  /** Reads every file again now; resolves once each is in force or its error reported. */
  reload(): Promise<void>;
  /** Stops watching the files. */
  close(): Promise<void>;
}

type Descriptors = Record<(typeof GEOIP_DESCRIPTORS)[number], string>;

interface Database {
  readonly path: string;
  reader: Reader<Response>;
  /** Size, inode and modification times of the file in force: a change of any is a new file. */
  version: string;
  /**
   * A digest of the bytes last looked at, in force or refused (or UNREADABLE): a rewrite within the file system's
   * timestamp tick keeps the version, and the same broken bytes are reported once.
   */
  seen: string;
  /** Lookup failures reported in the current episode (one report per episode). */
  failing: boolean;
}

/**
 * Descriptors `asn` (`AS13335`), `as_org` and `country` (ISO code, `DE`) of a client address, from MMDB files
 * (MaxMind GeoLite2 ASN and Country, ip-location-db, IPinfo Lite). Every file is read now: a missing or
 * corrupt one throws a {@link GeoipError}. Each is then checked for a change every `pollMs` and reloaded; a
 * broken new file goes to `onError` and the last good one stays in force. A lookup never throws: a miss is
 * {@link UNKNOWN}.
 */
export function geoipDescriptors(options: GeoipOptions): GeoipDescriptors {
  checkOptions(options);
  const databases = options.databases.map((path) => openDatabase(resolve(path)));
  const report = options.onError ?? ((error: GeoipError) => console.warn(error.message));
  const pollMs = options.pollMs ?? 1000;
  const reloadOne = (database: Database) => reloadDatabase(database, options, report);
  // A timer of our own, not fs.watchFile: that one sees no change when a rewrite keeps the size and lands in the
  // same timestamp tick.
  const poll = setInterval(() => {
    for (const database of databases) void reloadOne(database);
  }, pollMs);
  poll.unref();
  return {
    names: GEOIP_DESCRIPTORS,
    describe: (address) => describe(databases, address, report),
    reload: async () => {
      await Promise.all(databases.map(reloadOne));
    },
    close: async () => {
      clearInterval(poll);
    },
  };
}

function checkOptions(options: GeoipOptions): void {
  checkOptionNames('geoipDescriptors', options, OPTION_NAMES);
  const databases: unknown = options?.databases;
  if (
    !Array.isArray(databases) ||
    databases.length === 0 ||
    databases.some((path) => typeof path !== 'string')
  )
    throw new ConfigError('geoipDescriptors needs databases: a list of MMDB file paths');
}

function openDatabase(path: string): Database {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new GeoipError(path, `cannot be read (${(error as Error).message})`, { cause: error });
  }
  const version = versionOf(statSync(path));
  return { path, reader: readerOf(path, bytes), version, seen: digestOf(bytes), failing: false };
}

function digestOf(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * A file changed this recently may have been rewritten again within the same timestamp tick (Linux stamps files
 * with a coarse clock), with the same size: its bytes are compared until it has been still for this long.
 */
const RECENT_MS = 2000;

const UNREADABLE = 'unreadable';

/** A reader over the bytes, or a GeoipError when they are not an MMDB database. */
function readerOf(path: string, bytes: Buffer): Reader<Response> {
  try {
    return new Reader<Response>(bytes);
  } catch (error) {
    throw new GeoipError(path, `is not an MMDB database (${(error as Error).message})`, { cause: error });
  }
}

interface FileStats {
  size: number;
  ino: number;
  mtimeMs: number;
  ctimeMs: number;
}

function versionOf(stats: FileStats): string {
  return `${stats.size}:${stats.ino}:${stats.mtimeMs}:${stats.ctimeMs}`;
}

async function reloadDatabase(
  database: Database,
  options: GeoipOptions,
  report: (error: GeoipError) => void,
): Promise<void> {
  let bytes: Buffer;
  let version: string;
  try {
    const stats = await stat(database.path);
    version = versionOf(stats);
    const recent = Date.now() - Math.max(stats.mtimeMs, stats.ctimeMs) < RECENT_MS;
    if (version === database.version && !recent) return;
    bytes = await readFile(database.path);
  } catch (error) {
    // Reported once until the file can be read again.
    if (database.seen !== UNREADABLE) report(new GeoipError(database.path, String(error), { cause: error }));
    database.seen = UNREADABLE;
    return;
  }
  database.version = version;
  const digest = digestOf(bytes);
  if (digest === database.seen) return;
  database.seen = digest;
  try {
    database.reader = readerOf(database.path, bytes);
  } catch (error) {
    // A broken file is reported once; the last good one stays in force.
    report(error as GeoipError);
    return;
  }
  database.failing = false;
  options.onReload?.(database.path);
}

/** The three descriptors of an address, each from the first database that has it, else UNKNOWN. */
function describe(databases: readonly Database[], address: string, report: (error: GeoipError) => void) {
  const found: Descriptors = { asn: UNKNOWN, as_org: UNKNOWN, country: UNKNOWN };
  for (const database of databases) {
    const record = lookup(database, address, report);
    if (record === null) continue;
    if (found.asn === UNKNOWN) found.asn = asnOf(record) ?? UNKNOWN;
    if (found.as_org === UNKNOWN) found.as_org = asOrgOf(record) ?? UNKNOWN;
    if (found.country === UNKNOWN) found.country = countryOf(record) ?? UNKNOWN;
  }
  return found;
}

/** IPv6 on an IPv4-only file is a miss; any other failure is reported once per episode, and a miss. */
function lookup(database: Database, address: string, report: (error: GeoipError) => void): Response | null {
  if (address.includes(':') && database.reader.metadata.ipVersion === 4) return null;
  try {
    const record = database.reader.get(address);
    database.failing = false;
    return record;
  } catch (error) {
    if (!database.failing)
      report(new GeoipError(database.path, `lookup failed (${(error as Error).message})`, { cause: error }));
    database.failing = true;
    return null;
  }
}

type Fields = Readonly<Record<string, unknown>>;

const field = (record: unknown, name: string): unknown =>
  typeof record === 'object' && record !== null ? (record as Fields)[name] : undefined;

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

/** `AS13335`: GeoLite2's number, IPinfo's `asn` (`AS13335` or a number), or the traits of an Insights record. */
function asnOf(record: Response): string | undefined {
  const value =
    field(record, 'autonomous_system_number') ??
    field(record, 'asn') ??
    field(field(record, 'traits'), 'autonomous_system_number');
  if (typeof value === 'number' && Number.isInteger(value) && value > 0) return `AS${value}`;
  const given = text(value)?.toUpperCase();
  if (given === undefined) return undefined;
  return /^AS\d+$/.test(given) ? given : /^\d+$/.test(given) ? `AS${given}` : undefined;
}

function asOrgOf(record: Response): string | undefined {
  return text(
    field(record, 'autonomous_system_organization') ??
      field(record, 'as_name') ??
      field(field(record, 'traits'), 'autonomous_system_organization'),
  );
}

/** ISO 3166 code: GeoLite2's `country`, then its `registered_country`; ip-location-db's and IPinfo's `country_code`. */
function countryOf(record: Response): string | undefined {
  return text(
    field(field(record, 'country'), 'iso_code') ??
      field(record, 'country_code') ??
      field(field(record, 'registered_country'), 'iso_code'),
  )?.toUpperCase();
}
