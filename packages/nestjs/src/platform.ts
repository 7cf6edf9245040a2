import type { ServerResponse } from 'node:http';
import {
  ExpressFacts,
  type ExpressRequestFields,
  fastifyTrust,
  type HeaderValues,
  type ProxyTrust,
  type RequestFacts,
} from '@sluice/core/http';
import type { SluiceRequest } from './options.js';

/** What the guard reads of an Express request (@nestjs/platform-express). */
type ExpressRequest = SluiceRequest & ExpressRequestFields;

/** What the guard reads of a Fastify request (@nestjs/platform-fastify). */
interface FastifyRequest extends SluiceRequest {
  readonly routeOptions: { readonly url?: string | undefined };
  readonly socket: { readonly remoteAddress?: string | undefined };
  /** The Fastify instance: it keeps the `trustProxy` the FastifyAdapter was given. */
  readonly server?: object;
}

/** A Fastify reply: headers go through it, the Node response is `raw`. */
interface FastifyReply {
  readonly raw: ServerResponse;
  headers(values: HeaderValues): unknown;
}

const isFastifyRequest = (req: SluiceRequest): req is FastifyRequest =>
  typeof (req as Partial<FastifyRequest>).routeOptions === 'object';

const isFastifyReply = (res: object): res is FastifyReply =>
  typeof (res as Partial<FastifyReply>).headers === 'function' && 'raw' in res;

/** The Node response under the platform's (Express's is one, Fastify's reply holds one). */
export function rawResponse(res: object): ServerResponse {
  return isFastifyReply(res) ? res.raw : (res as ServerResponse);
}

/** Sets rate-limit headers on the platform's response, unless it has been sent already. */
export function setHeaders(res: object, headers: HeaderValues): void {
  if (rawResponse(res).headersSent) return;
  if (isFastifyReply(res)) res.headers(headers);
  else for (const name in headers) (res as ServerResponse).setHeader(name, headers[name] as string);
}

/** The request's facts on either platform: Nest guards run after routing, so the route template is known. */
export function requestFacts(req: SluiceRequest): RequestFacts {
  return isFastifyRequest(req) ? new FastifyFacts(req) : new ExpressFacts(req as ExpressRequest);
}

/** What the limiter reads off a Fastify request. */
class FastifyFacts implements RequestFacts {
  readonly ip: string | undefined;
  readonly method: string;
  readonly url: string;
  readonly route: string | undefined;
  readonly #req: FastifyRequest;

  constructor(req: FastifyRequest) {
    this.ip = req.ip;
    this.method = req.method;
    this.url = req.url;
    this.route = req.routeOptions.url;
    this.#req = req;
  }

  /**
   * The FastifyAdapter's `trustProxy`; when it cannot be read, 'none' if a forwarded header did not change the
   * address. A getter: only read until every start-up notice has been given.
   */
  get proxyTrust(): ProxyTrust | undefined {
    const req = this.#req;
    const configured = req.server === undefined ? undefined : fastifyTrust(req.server);
    if (configured !== undefined) return configured;
    return req.headers['x-forwarded-for'] !== undefined && this.ip === req.socket.remoteAddress
      ? 'none'
      : undefined;
  }

  header(name: string): string | readonly string[] | undefined {
    return this.#req.headers[name];
  }
}
