/** What `fetch` takes as its first argument. */
export type FetchInput = Parameters<typeof fetch>[0];

/** Why a refused request is given back instead of being sent again. */
export type NoRetryReason = 'not_idempotent' | 'body_not_replayable';

/** How each attempt of one logical request is sent. */
export interface RequestPlan {
  readonly url: URL;
  readonly method: string;
  /** Set when the request must not be sent twice. */
  readonly noRetry: NoRetryReason | undefined;
  readonly signal: AbortSignal | undefined;
  /** The arguments of attempt `attempt` (1 for the first): a fresh header set each, the same body. */
  /** The fetch arguments of an attempt; `extra`: headers of its own (a challenge's solution, a pass). */
  args(attempt: number, extra?: Readonly<Record<string, string>>): [FetchInput, RequestInit | undefined];
}

/** Header settings that shape every attempt. */
export interface PlanSettings {
  /** Adds an `Idempotency-Key` to non-idempotent requests that have none: true (a random UUID) or a maker. */
  readonly idempotencyKey: false | (() => string);
  /** Header carrying the attempt number on retries (2, 3, ...), or false. */
  readonly attemptHeader: string | false;
  /** Header carrying the retry number on retries (1, 2, ...), as Sluice servers read it; absent or false: none. */
  readonly retryHeader?: string | false;
}

/** The headers a retry adds: the attempt number and the retry number, each under its header when set. */
export function retryHeaders(settings: PlanSettings, attempt: number): Record<string, string> | undefined {
  if (attempt <= 1) return undefined;
  const { attemptHeader, retryHeader = false } = settings;
  if (attemptHeader === false && retryHeader === false) return undefined;
  const headers: Record<string, string> = {};
  if (retryHeader !== false) headers[retryHeader.toLowerCase()] = String(attempt - 1);
  if (attemptHeader !== false) headers[attemptHeader.toLowerCase()] = String(attempt);
  return headers;
}

/** Methods that RFC 9110 defines as idempotent: sending one twice has the effect of sending it once. */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);

/** Whether sending `method` twice has the effect of sending it once (RFC 9110 9.2.2); `method` upper case. */
export function isIdempotent(method: string): boolean {
  return IDEMPOTENT.has(method);
}

/** The header that makes a non-idempotent request safe to send again. */
export const IDEMPOTENCY_KEY = 'idempotency-key';

/**
 * Plans the attempts of `fetch(input, init)`. Throws a TypeError (as fetch would) when `input` is no
 * absolute URL. A body given in `init` as a string, bytes, Blob, URLSearchParams or FormData is sent
 * again on a retry; a stream, or the body of a `Request` object, can be sent once only.
 */
export function planRequest(
  input: FetchInput,
  init: RequestInit | undefined,
  settings: PlanSettings,
): RequestPlan {
  const request = input instanceof Request ? input : undefined;
  // Narrowed on `input` itself, as Node's types and the DOM's (which GraphQL servers' types bring in) both allow.
  const url = new URL(input instanceof Request ? input.url : input);
  const method = (init?.method ?? request?.method ?? 'GET').toUpperCase();
  const idempotent = isIdempotent(method);
  const base = new Headers(init?.headers ?? request?.headers);
  const makeKey = idempotent || base.has(IDEMPOTENCY_KEY) ? false : settings.idempotencyKey;
  // One key per logical request, made here once: every attempt carries the same.
  if (makeKey !== false) base.set(IDEMPOTENCY_KEY, makeKey());
  const replayable =
    init?.body === undefined || init.body === null ? !request?.body : isReplayable(init.body);
  const safe = idempotent || base.has(IDEMPOTENCY_KEY);
  const touchesHeaders = makeKey !== false || settings.attemptHeader !== false || !!settings.retryHeader;
  return {
    url,
    method,
    noRetry: !safe ? 'not_idempotent' : !replayable ? 'body_not_replayable' : undefined,
    signal: init?.signal ?? request?.signal ?? undefined,
    args(attempt, extra) {
      const added = retryHeaders(settings, attempt);
      // Untouched arguments when nothing is added: the request goes out exactly as the caller made it.
      if (extra === undefined && (!touchesHeaders || (added === undefined && makeKey === false)))
        return [input, init];
      const headers = new Headers(base);
      for (const name in added) headers.set(name, added[name] as string);
      for (const name in extra) headers.set(name, extra[name] as string);
      return [input, { ...init, headers }];
    },
  };
}

/** Whether a body value can be read again for another attempt. */
function isReplayable(body: NonNullable<RequestInit['body']>): boolean {
  return (
    typeof body === 'string' ||
    body instanceof ArrayBuffer ||
    ArrayBuffer.isView(body) ||
    body instanceof Blob ||
    body instanceof URLSearchParams ||
    body instanceof FormData
  );
}
