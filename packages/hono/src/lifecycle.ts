import { ServerResponse } from 'node:http';
import { releaseWhenDone, waitUnlessClosed } from '@sluice/core';
import type { Context, Next } from 'hono';

/** The Node response under a context served by @hono/node-server; undefined on other runtimes. */
function nodeResponse(c: Context): ServerResponse | undefined {
  const env = c.env as { server?: { outgoing?: unknown }; outgoing?: unknown } | undefined;
  const outgoing = env?.server?.outgoing ?? env?.outgoing;
  return outgoing instanceof ServerResponse ? outgoing : undefined;
}

/**
 * Gives the leases back exactly once when the exchange ends, and returns the `next` to carry on with. On Node:
 * when the response is written or its connection closes (an aborted client included), as in Express and Koa.
 * Elsewhere: when the request is aborted or the chain has produced its response (a streamed body may still be
 * flowing then).
 */
export function releasingNext(c: Context, next: Next, release: () => Promise<void>): Next {
  const res = nodeResponse(c);
  if (res !== undefined) {
    releaseWhenDone(res, release);
    return next;
  }
  const signal = c.req.raw.signal;
  signal.addEventListener('abort', release, { once: true });
  return () =>
    next().finally(() => {
      signal.removeEventListener('abort', release);
      void release();
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
