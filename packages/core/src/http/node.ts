import type { ServerResponse } from 'node:http';

/** True once the response can no longer be delivered (sent, or the client went away). */
export function isResponseClosed(res: ServerResponse): boolean {
  return res.writableEnded || res.destroyed || res.socket?.destroyed === true;
}

/**
 * Runs `release` when the response finishes or its connection closes, whichever comes first: a handler
 * that throws still ends in an error response, and an aborted client closes the connection. Together
 * with an idempotent `release`, a lease is given back exactly once.
 */
export function releaseWhenDone(res: ServerResponse, release: () => unknown): void {
  const done = (): void => {
    res.off('finish', done);
    res.off('close', done);
    release();
  };
  if (res.writableFinished || res.destroyed) {
    release();
    return;
  }
  res.once('finish', done);
  res.once('close', done);
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
