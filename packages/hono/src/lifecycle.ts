import { ServerResponse } from 'node:http';
import { type ResponseListener, reportWhenDone, waitUnlessClosed } from '@sluice/core/http';
import type { Context, Next } from 'hono';

/** The Node response under a context served by @hono/node-server; undefined on other runtimes. */
function nodeResponse(c: Context): ServerResponse | undefined {
  const env = c.env as { server?: { outgoing?: unknown }; outgoing?: unknown } | undefined;
  const outgoing = env?.server?.outgoing ?? env?.outgoing;
  return outgoing instanceof ServerResponse ? outgoing : undefined;
}

/**
 * Reports how the exchange ended, and returns the `next` to carry on with. On Node: the response's status when it
 * is written, undefined when its connection closes first (an aborted client), as in Express and Koa. Elsewhere:
 * the status of the response the chain produced (a streamed body may still be flowing then), or undefined when
 * the request is aborted first. The verdict hears only the first report.
 */
export function reportingNext(c: Context, next: Next, onResponse: ResponseListener): Next {
  const res = nodeResponse(c);
  if (res !== undefined) {
    reportWhenDone(res, onResponse);
    return next;
  }
  const signal = c.req.raw.signal;
  const aborted = (): void => onResponse(undefined);
  signal.addEventListener('abort', aborted, { once: true });
  return () =>
    next().finally(() => {
      signal.removeEventListener('abort', aborted);
      onResponse(c.res.status);
    });
}

/**
 * Waits `ms` (a leaky_bucket delay) unless the client goes first. Resolves true when the request should
 * proceed, false when there is no one left to serve.
 */
export function waitUnlessGone(c: Context, ms: number): Promise<boolean> {
  const res = nodeResponse(c);
  if (res !== undefined) return waitUnlessClosed(res, ms);
  const signal = c.req.raw.signal;
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(!signal.aborted);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
