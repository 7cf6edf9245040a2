import type { ProxyTrust, RequestFacts } from '@sluice/core/http';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * Fastify's `trustProxy` setting. Fastify has no public accessor for it: it is read from the options the
 * instance keeps (Fastify 5); undefined when they cannot be found.
 */
export function configuredTrust(fastify: FastifyInstance): ProxyTrust | undefined {
  for (let holder: object | null = fastify; holder !== null; holder = Object.getPrototypeOf(holder)) {
    const key = Object.getOwnPropertySymbols(holder).find(
      (symbol) => symbol.description === 'fastify.options',
    );
    if (key === undefined) continue;
    const trust = (holder as Record<symbol, { trustProxy?: unknown } | undefined>)[key]?.trustProxy;
    // Fastify trusts nothing for a falsy setting and every hop for `true`; a count, list or function bounds it.
    if (!trust) return 'none';
    return trust === true ? 'all' : 'bounded';
  }
  return undefined;
}

/** What the limiter reads off a Fastify request; a class, so no closure is made per request. */
export class FastifyFacts implements RequestFacts {
  readonly ip: string;
  readonly method: string;
  readonly url: string;
  readonly route: string | undefined;
  readonly #request: FastifyRequest;
  readonly #trust: ProxyTrust | undefined;

  constructor(request: FastifyRequest, route: string | undefined, trust: ProxyTrust | undefined) {
    this.ip = request.ip;
    this.method = request.method;
    this.url = request.url;
    this.route = route;
    this.#request = request;
    this.#trust = trust;
  }

  /**
   * The app's setting; when it could not be read, 'none' if a forwarded header did not change the address.
   * A getter: only read until every start-up notice has been given.
   */
  get proxyTrust(): ProxyTrust | undefined {
    if (this.#trust !== undefined) return this.#trust;
    const request = this.#request;
    return request.headers['x-forwarded-for'] !== undefined && this.ip === request.socket.remoteAddress
      ? 'none'
      : undefined;
  }

  header(name: string): string | readonly string[] | undefined {
    return this.#request.headers[name];
  }
}
