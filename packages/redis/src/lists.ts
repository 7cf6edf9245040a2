import { EMPTY_SET, type ValueList, type ValueSet, valueSetInSteps } from '@sluice/core/store';
import type { Cluster, Redis } from 'ioredis';

/** Options of {@link redisList}. */
export interface RedisListOptions {
  /** How often the set is read again, in ms; default 5000. Requests never wait for it. */
  readonly ttlMs?: number;
  /** Told of each refresh that failed (Redis unreachable, a bad entry); the last good list stays in force. */
  readonly onError?: (error: Error) => void;
  /** Told of each changed list put in force (an unchanged set is not rebuilt). */
  readonly onRefresh?: (list: ValueSet) => void;
}

/** A list read from a Redis set, refreshed in the background. */
export interface RedisList extends ValueList {
  /** Settles when the first read is done (the list is empty until then); rejects if it failed. */
  readonly ready: Promise<void>;
  /** Reads the set now; resolves once the new list is in force or the error has been reported. */
  refresh(): Promise<void>;
  /** Stops refreshing (the client is the app's: it stays open). */
  close(): Promise<void>;
}

const DEFAULT_TTL_MS = 5000;
/** Members read per SSCAN call: a large set is read in steps that never block Redis for long. */
const SCAN_COUNT = 1000;

/**
 * A fleet-wide list from a Redis set (`SADD blocked_ips 198.51.100.0/24`): every gateway reads the set every
 * `ttlMs` in the background (SSCAN, so a large set never blocks Redis) and answers requests from the copy it
 * holds, so a request never makes a Redis call for a list. A failed read keeps the last good copy.
 */
export function redisList(client: Redis | Cluster, key: string, options: RedisListOptions = {}): RedisList {
  if (typeof key !== 'string' || key === '') throw new TypeError('redisList needs the key of a Redis set');
  const ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
  if (!(Number.isFinite(ttlMs) && ttlMs > 0))
    throw new TypeError(`ttlMs must be a positive number, got ${ttlMs}`);
  let current: ValueSet = EMPTY_SET;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let reading: Promise<void> | undefined;

  let lastPrint: string | undefined;

  async function readOnce(): Promise<void> {
    const members = await scanSet(client, key);
    // An unchanged set (the usual refresh) is not rebuilt: hashing the members costs far less.
    const print = fingerprint(members);
    if (print === lastPrint) return;
    current = await valueSetInSteps(members, `Redis set ${key}`);
    lastPrint = print;
    options.onRefresh?.(current);
  }

  /** One read at a time: a refresh asked for while one runs shares it. */
  function refresh(): Promise<void> {
    reading ??= readOnce().finally(() => {
      reading = undefined;
      schedule();
    });
    return reading;
  }

  function schedule(): void {
    clearTimeout(timer);
    if (closed) return;
    timer = setTimeout(() => {
      refresh().catch((error: unknown) => options.onError?.(asError(error)));
    }, ttlMs);
    timer.unref();
  }

  const ready = refresh();
  // The first read's failure is the caller's to see through `ready`; it must not surface as unhandled.
  ready.catch((error: unknown) => options.onError?.(asError(error)));
  return {
    get current() {
      return current;
    },
    ready,
    refresh: () => refresh().catch((error: unknown) => options.onError?.(asError(error))),
    async close() {
      closed = true;
      clearTimeout(timer);
      await reading?.catch(() => undefined);
    },
  };
}

async function scanSet(client: Redis | Cluster, key: string): Promise<string[]> {
  const members: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await client.sscan(key, cursor, 'COUNT', SCAN_COUNT);
    for (const member of batch) members.push(member);
    cursor = next;
  } while (cursor !== '0');
  return members;
}

/** Count and order-free hashes of the members (SSCAN may return them in any order). */
function fingerprint(members: readonly string[]): string {
  let sum = 0;
  let mixed = 0;
  for (const member of members) {
    const hash = fnv1a(member);
    sum = (sum + hash) >>> 0;
    mixed = (mixed ^ Math.imul(hash, 0x9e3779b1)) >>> 0;
  }
  return `${members.length}:${sum}:${mixed}`;
}

/** 32-bit FNV-1a of a string's UTF-16 code units. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
