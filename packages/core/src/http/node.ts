import type { ServerResponse } from 'node:http';
import type { HeaderValues } from '../fields/responses.js';

/**
 * Sets each header on a Node response with its own `setHeader`: what the frameworks' own setters
 * come to for text values, without their per-field wrappers (Content-Type charset, coercion), which the
 * RateLimit headers never need.
 */
export function setHeaders(res: Pick<ServerResponse, 'setHeader'>, headers: HeaderValues): void {
  for (const name in headers) res.setHeader(name, headers[name] as string);
}

/** True once the response can no longer be delivered (sent, or the client went away). */
export function isResponseClosed(res: ServerResponse): boolean {
  return res.writableEnded || res.destroyed || res.socket?.destroyed === true;
}

/** A response header's value as a Node framework keeps it (Node's `getHeader` shape). */
export type ResponseHeader = (name: string) => number | string | readonly string[] | undefined;

/**
 * Reports how the response ended, once: on 'finish' its status; on 'close' first (the client went away before
 * the response was sent: a handler that throws still ends in an error response, which finishes) undefined.
 * A response that has ended already is reported at once. Headers are read with `responseHeader`, by default
 * the Node response's own `getHeader` (a framework that hands its headers to `writeHead` gives its own).
 */
export function reportWhenDone(
  res: ServerResponse,
  onResponse: (status: number | undefined, header: (name: string) => string | undefined) => void,
  responseHeader: ResponseHeader = (name) => res.getHeader(name),
): void {
  const header = (name: string) => headerText(responseHeader(name));
  if (res.writableFinished) {
    onResponse(res.statusCode, header);
    return;
  }
  if (res.destroyed) {
    onResponse(undefined, header);
    return;
  }
  const finished = (): void => {
    res.off('close', closed);
    onResponse(res.statusCode, header);
  };
  const closed = (): void => {
    res.off('finish', finished);
    onResponse(res.writableFinished ? res.statusCode : undefined, header);
  };
  res.once('finish', finished);
  res.once('close', closed);
}

/** A Node header's value as text: its first value when it has several; undefined when unset. */
function headerText(value: number | string | readonly string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === 'object' ? value[0] : String(value);
}

/**
 * Waits `ms` (a leaky_bucket delay) unless the client disconnects first.
 * Resolves true when the request should proceed, false when there is no one left to serve.
 */
export function waitUnlessClosed(res: ServerResponse, ms: number): Promise<boolean> {
  if (isResponseClosed(res)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onClose = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      res.off('close', onClose);
      resolve(!isResponseClosed(res));
    }, ms);
    res.once('close', onClose);
  });
}
