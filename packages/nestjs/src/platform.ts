import type { ServerResponse } from 'node:http';
import { type HeaderValues, type RequestFacts, setHeaders as setNodeHeaders } from '@sluice/core/http';
import { ExpressFacts, type ExpressRequestFields } from '@sluice/express/facts';
import { FastifyFacts, type FastifyRequestFields } from '@sluice/fastify/facts';
import type { SluiceRequest } from './options.js';

/** What the guard reads of an Express request (@nestjs/platform-express). */
type ExpressRequest = SluiceRequest & ExpressRequestFields;

/** What the guard reads of a Fastify request (@nestjs/platform-fastify). */
type FastifyRequest = SluiceRequest &
  FastifyRequestFields & { readonly routeOptions: { readonly url?: string | undefined } };

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
  else setNodeHeaders(res as ServerResponse, headers);
}

/**
 * The request's facts on either platform, the Express and Fastify adapters' own: Nest guards run after routing,
 * so the route template is known (Fastify's `trustProxy` is read off the request's Fastify instance).
 */
export function requestFacts(req: SluiceRequest): RequestFacts {
  return isFastifyRequest(req)
    ? new FastifyFacts(req, req.routeOptions.url)
    : new ExpressFacts(req as ExpressRequest);
}
