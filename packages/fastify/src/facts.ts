import type { ProxyTrust, RequestFacts } from '@sluice/core/http';
import type { FastifyRequest } from 'fastify';

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
