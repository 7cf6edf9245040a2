/**
 * Misconfiguration smells an adapter logs once each, with a stable code, after the rule or descriptor they
 * are about; silence one with the `silence` option. (Proxy trust smells are in proxy.ts.)
 */
export const ADAPTER_NOTICES = {
  SLUICE_UNVALIDATED_API_KEY:
    'is keyed by api_key, read from the API key header unchecked: a client that sends a new random key ' +
    'with each request is never limited by it. Pass validateApiKey(key, req): keys it refuses are treated ' +
    'as anonymous, so the per-IP rules apply to them.',
  SLUICE_RAW_IPV6_KEY:
    'from descriptors(req) holds a raw IPv6 address: one subscriber holds a whole /64 and every address in ' +
    'it would be a counter of its own. Return normalizeIp(address) (from @sluice/core) instead.',
  SLUICE_ROUTE_TEMPLATE_UNSEEN:
    'matches a route template, but the global middleware runs before the router and sees paths ' +
    '(/users/42), never templates (/users/:id): the rule never applies there. Give it to limiter.route() on ' +
    'that route instead.',
  SLUICE_ROUTE_KEY_PATH:
    'is keyed by route, which the global middleware sees as the path: every distinct path (/users/1, ' +
    '/users/2, ...) gets a counter of its own. Key it by route in limiter.route() to count per template.',
} as const;

/** An adapter notice code. */
export type AdapterNotice = keyof typeof ADAPTER_NOTICES;

/**
 * Logs each notice once, with its code; silenced codes never. Text about a rule names the rule (never a key,
 * an address or a header value).
 */
export class Notices {
  readonly #given: Set<AdapterNotice>;
  readonly #logger: { warn(message: string): void };

  constructor(logger: { warn(message: string): void }, silence: readonly string[] = []) {
    this.#logger = logger;
    this.#given = new Set(silence.filter((code): code is AdapterNotice => code in ADAPTER_NOTICES));
  }

  /** True while the notice may still be given: worth looking for its cause. */
  pending(code: AdapterNotice): boolean {
    return !this.#given.has(code);
  }

  /** Gives the notice about `subject` (`rule "x"`, `descriptor "y"`), once. */
  give(code: AdapterNotice, subject: string): void {
    if (this.#given.has(code)) return;
    this.#given.add(code);
    this.#logger.warn(`sluice: ${subject} ${ADAPTER_NOTICES[code]} [${code}]`);
  }
}
