import type { HeaderSource } from './headerSource.js';
import { readModelBudget } from './modelFields.js';
import { type ListItem, parseList } from './structuredFields.js';

/** What a response says about one rate-limit policy of the server. */
export interface RateLimitInfo {
  /** The policy's name; '' when the server names none (legacy fields, older drafts). */
  readonly policy: string;
  /** Requests left in the current window. */
  readonly remaining: number;
  /** Until the window resets (or the quota is back), ms from the response. */
  readonly resetMs: number;
  /** The policy's quota per window, when the response says it. */
  readonly limit?: number;
  /** The policy's window, ms, when the response says it. */
  readonly windowMs?: number;
}

/** A quota and window from a policy field. */
interface Quota {
  readonly limit: number;
  readonly windowMs?: number;
}

/** Epoch seconds start here: a reset above it is a date, below it a number of seconds. */
const EPOCH_SECONDS = 1_000_000_000;
const EPOCH_MS = 1_000_000_000_000;

/**
 * The rate-limit policies a response describes, read from the IETF draft `RateLimit` / `RateLimit-Policy`
 * fields (the structured form Sluice sends, and the older `limit=, remaining=, reset=` form), else from
 * `RateLimit-Limit/Remaining/Reset` or legacy `X-RateLimit-*`, else from the model-API request fields
 * (`x-ratelimit-remaining-requests`, ..., a policy named `requests`). Unreadable fields are ignored.
 */
export function readRateLimits(headers: HeaderSource, now: number): RateLimitInfo[] {
  const draft = headers.get('ratelimit');
  const quotas = readPolicies(headers.get('ratelimit-policy'));
  if (draft !== null) {
    const items = parseList(draft);
    if (items?.some((item) => item.params.has('r'))) return fromItems(items, quotas);
    const older = fromDictionary(draft, quotas);
    if (older !== undefined) return [older];
  }
  const separate =
    fromSeparate(headers, 'ratelimit-', now, quotas) ?? fromSeparate(headers, 'x-ratelimit-', now, quotas);
  if (separate !== undefined) return [separate];
  const requests = readModelBudget(headers, 'requests');
  return requests === undefined ? [] : [{ policy: 'requests', ...requests }];
}

/** `RateLimit-Policy`: `"name";q=100;w=60` items (or an older draft's bare `100;w=60`), by name. */
function readPolicies(field: string | null): Map<string, Quota> {
  const quotas = new Map<string, Quota>();
  const items = field === null ? undefined : parseList(field);
  for (const item of items ?? []) {
    const bare = typeof item.value === 'number';
    const limit = bare ? item.value : item.params.get('q');
    if (!isCount(limit)) continue;
    const window = item.params.get('w');
    const name = bare ? '' : String(item.value);
    quotas.set(name, isCount(window) ? { limit, windowMs: window * 1000 } : { limit });
  }
  return quotas;
}

/** `"name";r=5;t=30` items: one policy each. */
function fromItems(items: readonly ListItem[], quotas: ReadonlyMap<string, Quota>): RateLimitInfo[] {
  const infos: RateLimitInfo[] = [];
  for (const item of items) {
    const remaining = item.params.get('r');
    const policy = typeof item.value === 'number' ? '' : String(item.value);
    const quota = quotas.get(policy);
    const reset = item.params.get('t');
    const resetMs = isCount(reset) ? reset * 1000 : quota?.windowMs;
    if (!isCount(remaining) || resetMs === undefined) continue;
    infos.push({ policy, remaining, resetMs, ...quota });
  }
  return infos;
}

/** The older draft's `RateLimit: limit=100, remaining=5, reset=30`. */
function fromDictionary(field: string, quotas: ReadonlyMap<string, Quota>): RateLimitInfo | undefined {
  const values = new Map<string, number>();
  for (const member of field.split(',')) {
    const [key, value] = member.split('=').map((part) => part.trim());
    if (key !== undefined && value !== undefined) values.set(key.toLowerCase(), Number(value));
  }
  const remaining = values.get('remaining');
  const reset = values.get('reset');
  if (!isCount(remaining) || !isCount(reset)) return undefined;
  const limit = values.get('limit');
  const quota = quotas.get('') ?? (isCount(limit) ? { limit } : undefined);
  return { policy: '', remaining, resetMs: reset * 1000, ...quota };
}

/** `<prefix>Limit`, `<prefix>Remaining` and `<prefix>Reset`; a reset may be seconds, or an epoch date. */
function fromSeparate(
  headers: HeaderSource,
  prefix: string,
  now: number,
  quotas: ReadonlyMap<string, Quota>,
): RateLimitInfo | undefined {
  const remaining = numberOf(headers.get(`${prefix}remaining`));
  const reset = numberOf(headers.get(`${prefix}reset`));
  if (!isCount(remaining) || !isCount(reset)) return undefined;
  const limit = numberOf(headers.get(`${prefix}limit`));
  const quota = quotas.get('') ?? (isCount(limit) ? { limit } : undefined);
  return { policy: '', remaining, resetMs: resetFromNow(reset, now), ...quota };
}

function resetFromNow(reset: number, now: number): number {
  if (reset >= EPOCH_MS) return Math.max(0, reset - now);
  if (reset >= EPOCH_SECONDS) return Math.max(0, reset * 1000 - now);
  return reset * 1000;
}

function numberOf(text: string | null): number | undefined {
  // A list (two limiters each adding the field) keeps the first value.
  const first = text?.split(',')[0]?.trim();
  return first === undefined || first === '' ? undefined : Number(first);
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}
