import type { NOTICE_CODES } from '../base/notices.js';
import type { RequestFacts } from '../request/facts.js';
import { PROXY_NOTICES, proxyNotice } from '../request/proxy.js';
import type { CompiledRules } from '../rules/contract.js';
import { rawIpv6Descriptor, ruleSmells } from '../rules/smells.js';
import type { RouteScope } from './afterBody.js';
import type { CheckScope } from './notes.js';

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
  SLUICE_COST_BEFORE_BODY:
    'gave no cost (undefined or NaN, or it threw) for a request with a body, decided before its body was ' +
    "parsed: the rule's own cost was charged (1 unless the rule says). If the cost comes from the body (a " +
    "batch's operations), give the route afterBody: true (limiter.route(rules, {afterBody: true}), or the route " +
    'config.rateLimit.afterBody): it is then decided once the body is parsed.',
} as const satisfies Record<(typeof NOTICE_CODES.adapter)[number], string>;

/** An adapter notice code. */
export type AdapterNotice = keyof typeof ADAPTER_NOTICES;

/** What decides which notices can apply to a limiter. */
export interface NoticeSettings {
  readonly logger: { warn(message: string): void };
  /** Codes never to log. */
  readonly silence?: readonly string[];
  /** API keys come from the header unchecked (no `apiKey`, no `validateApiKey`). */
  readonly rawKeys: boolean;
  /** The global middleware runs before the router and sees paths whenever the request has no route. */
  readonly globalSeesPaths: boolean;
}

const PROXY_CODES = Object.keys(PROXY_NOTICES).length;

/**
 * Requests whose proxy headers are all looked at; after them, one in PROXY_SAMPLE is. A proxy in front of an
 * app sends its headers with every request, so its notice still comes within a few requests, and a busy
 * limiter stops paying two header reads per request for notices that never come.
 */
export const PROXY_EVERY_REQUEST = 1024;
export const PROXY_SAMPLE = 1024;

/** Whether the `seen`-th request (from 0) is looked at: all of the first, then one in PROXY_SAMPLE. */
function sampled(seen: number): boolean {
  return seen < PROXY_EVERY_REQUEST || seen % PROXY_SAMPLE === 0;
}

/**
 * Watches one limiter's requests and rules for misconfiguration and logs each notice once, with its code;
 * silenced codes never. Text names a rule or a descriptor, never a key, an address or a header value.
 */
export class NoticeWatch {
  readonly #settings: NoticeSettings;
  /** Codes given or silenced. */
  readonly #given: Set<string>;
  #proxyGiven: number;
  /** Requests seen, for the proxy notices' sampling. */
  #requests = 0;
  /** Descriptor sets the app's hook returned, for their notice's sampling. */
  #descriptorSets = 0;
  /** The global table last looked at: each table is looked at once. */
  #smelled: CompiledRules | undefined;

  constructor(settings: NoticeSettings) {
    this.#settings = settings;
    this.#given = new Set(settings.silence);
    this.#proxyGiven = Object.keys(PROXY_NOTICES).filter((code) => this.#given.has(code)).length;
  }

  /**
   * Before a request's check: proxy trust smells, and (when the global rules apply) the global table's
   * smells, once per table: api_key rules counting raw header values, and where the global middleware sees
   * paths, rules matching or keyed by route.
   */
  request(facts: RequestFacts, globalTable: CompiledRules | undefined): void {
    if (this.#proxyGiven < PROXY_CODES && sampled(this.#requests++)) this.#proxy(facts);
    if (globalTable === undefined || globalTable === this.#smelled) return;
    const pathsOnly = this.#settings.globalSeesPaths && facts.route === undefined;
    // Until a request arrives without a template, a router-mounted limiter may still see templates.
    if (pathsOnly || !this.#settings.globalSeesPaths) this.#smelled = globalTable;
    const smells = ruleSmells(globalTable);
    if (this.#settings.rawKeys) this.#rules('SLUICE_UNVALIDATED_API_KEY', smells.apiKeyed);
    if (!pathsOnly) return;
    this.#rules('SLUICE_ROUTE_TEMPLATE_UNSEEN', smells.templateMatched);
    this.#rules('SLUICE_ROUTE_KEY_PATH', smells.routeKeyed);
  }

  /** Route-level rules, when compiled: api_key rules counting raw header values. */
  routeRules(rules: CompiledRules): void {
    if (this.#settings.rawKeys) this.#rules('SLUICE_UNVALIDATED_API_KEY', ruleSmells(rules).apiKeyed);
  }

  /** What `descriptors(req)` returned: a raw IPv6 address in it (sampled as the proxy headers are). */
  descriptors(own: unknown): void {
    if (own === undefined || !sampled(this.#descriptorSets++) || this.#given.has('SLUICE_RAW_IPV6_KEY'))
      return;
    const name = rawIpv6Descriptor(own);
    if (name !== undefined)
      this.#give(
        'SLUICE_RAW_IPV6_KEY',
        `descriptor ${JSON.stringify(name)} ${ADAPTER_NOTICES.SLUICE_RAW_IPV6_KEY}`,
      );
  }

  /**
   * What `cost(req)` answered, for a request decided before its body was parsed (a scope without
   * `afterBody`): no number for a request that has a body most likely means a cost read from a body that is
   * not there yet, and the request was charged the rule's cost instead. Once per limiter.
   */
  cost(value: unknown, facts: RequestFacts, scope: CheckScope): void {
    if (typeof value === 'number' && !Number.isNaN(value)) return;
    if (this.#given.has('SLUICE_COST_BEFORE_BODY') || (scope as RouteScope).afterBody === true) return;
    if (!hasBody(facts)) return;
    const where = facts.route === undefined ? facts.method : `${facts.method} ${facts.route}`;
    this.#give('SLUICE_COST_BEFORE_BODY', `cost(req) on ${where} ${ADAPTER_NOTICES.SLUICE_COST_BEFORE_BODY}`);
  }

  #proxy(facts: RequestFacts): void {
    const code = proxyNotice(facts, this.#given);
    if (code === undefined) return;
    this.#proxyGiven += 1;
    const setting = facts.proxySetting;
    this.#give(
      code,
      setting === undefined ? PROXY_NOTICES[code] : `${PROXY_NOTICES[code]} Here: ${setting}.`,
    );
  }

  #rules(code: AdapterNotice, rules: readonly string[]): void {
    if (rules.length === 0 || this.#given.has(code)) return;
    this.#give(code, `rule ${rules.map((rule) => JSON.stringify(rule)).join(', ')} ${ADAPTER_NOTICES[code]}`);
  }

  #give(code: string, text: string): void {
    this.#given.add(code);
    this.#settings.logger.warn(`sluice: ${text} [${code}]`);
  }
}

/** Whether the request carries a body: a Content-Length above 0, or a Transfer-Encoding (chunked). */
function hasBody(facts: RequestFacts): boolean {
  if (facts.header('transfer-encoding') !== undefined) return true;
  const length = facts.header('content-length');
  return typeof length === 'string' && length !== '0' && length !== '';
}
