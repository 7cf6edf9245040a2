import type { ProxyTrust, RequestFacts } from './facts.js';

export { type ForwardedTrust, forwardedTrust, type TrustProxy } from './trustProxy.js';

/**
 * What the limiter reads off a Fetch `Request`: method, request target and headers through the `Headers` API;
 * the client address, proxy trust and route template come from the framework, which alone knows them.
 */
export class FetchFacts implements RequestFacts {
  readonly ip: string | undefined;
  readonly method: string;
  readonly url: string;
  readonly route: string | undefined;
  readonly proxyTrust: ProxyTrust;
  readonly #headers: Headers;

  constructor(request: Request, ip: string | undefined, proxyTrust: ProxyTrust, route?: string) {
    this.ip = ip;
    this.method = request.method;
    this.url = requestTarget(request.url);
    this.route = route;
    this.proxyTrust = proxyTrust;
    this.#headers = request.headers;
  }

  /** Repeated headers arrive joined by `, ` (the Fetch API has no other view of them). */
  header(name: string): string | undefined {
    return this.#headers.get(name) ?? undefined;
  }
}

/** `/path?query` of an absolute URL (a Request's url always is one), without parsing it whole. */
export function requestTarget(url: string): string {
  const scheme = url.indexOf('://');
  const start = url.indexOf('/', scheme === -1 ? 0 : scheme + 3);
  if (start === -1) return '/';
  const hash = url.indexOf('#', start);
  return hash === -1 ? url.slice(start) : url.slice(start, hash);
}
