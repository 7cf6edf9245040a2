import type { ServerResponse } from 'node:http';
import type { DeniedResponse, HeaderValues } from '../fields/responses.js';
import type { RateLimitInfo } from './info.js';
import { type ResponseHeader, reportWhenDone, setHeaders, waitUnlessClosed } from './node.js';
import type { AdapterStage } from './options.js';
import { sendChallengePage } from './page.js';
import { type VerdictIO, type VerdictWriter, verdictWriter } from './writer.js';

/**
 * What only a Node framework knows for the Node layer: where the Node response is, where handlers find the
 * request's limit, and how it sends a denial. The response's end, the leaky_bucket wait and the header
 * writing are the layer's, on the Node response. `A`, `B` and `N` as in {@link VerdictIO}.
 */
export interface NodeFramework<A, B, N> {
  /** The Node response under the framework's (`res`, `ctx.res`, `reply.raw`). */
  response(a: A, b: B): ServerResponse;
  /** Exposes the request's limit to handlers (`req.rateLimit`, `ctx.state.rateLimit`...). */
  setInfo(a: A, b: B, info: RateLimitInfo): void;
  /** The app's own `onDenied`, called with the framework's arguments; undefined when it has none. */
  readonly onDenied: ((a: A, b: B, denied: DeniedResponse) => unknown) | undefined;
  /** Sends the default denial (a JSON 429, 503 when a rule failed closed). */
  sendDenied(a: A, b: B, denied: DeniedResponse): unknown;
  /** True once a response was sent; default: the Node response's headers are sent. */
  sent?(a: A, b: B): boolean;
  /**
   * Reads a header the app set on its response, once it has ended (the `settleHeader`); default: the Node
   * response's `getHeader`. A framework that keeps headers of its own and hands them to `writeHead` (a reply's
   * `reply.header()`) reads them where it keeps them.
   */
  responseHeader?(a: A, b: B): ResponseHeader;
  /** Sets the RateLimit headers; default: Node's own `setHeader` on the Node response. */
  setHeaders?(a: A, b: B, headers: HeaderValues): void;
  /** After `onDenied`: the answer it gave, or undefined to send the default; default: `b` once sent. */
  answered?(a: A, b: B, own: unknown, threw: boolean): unknown;
  /** What the middleware ends with when the client left during a wait; default: nothing. */
  left?(a: A, b: B, next: N): unknown;
  /**
   * Sends a challenge page (a denial with `html`); default: written on the Node response, then `left` (so a
   * framework that must be told it no longer owns the response is told).
   */
  sendPage?(a: A, b: B, denied: DeniedResponse): unknown;
}

/** How a framework's middleware goes on: the parts of {@link VerdictIO} that depend on its calling style. */
export type MiddlewareStyle<A, B, N, R> = Pick<VerdictIO<A, B, N, R>, 'proceed' | 'stop' | 'later'>;

const nothing = (): void => {};
const resolved = (): Promise<void> => Promise.resolve();

/** Callback style: `next()` (`done()`) goes on, a rejection is handed to it. */
export function callbackStyle<A, B, N extends (error?: unknown) => unknown>(): MiddlewareStyle<
  A,
  B,
  N,
  void
> {
  return {
    proceed: (_a, _b, next) => void next(),
    stop: nothing,
    later: (_a, _b, next, pending) => void pending.catch(next),
  };
}

/** Promise style: the middleware returns `next()`'s promise, a rejection included. */
export function promiseStyle<A, B, N extends () => Promise<unknown>>(): MiddlewareStyle<
  A,
  B,
  N,
  Promise<void>
> {
  return {
    proceed: (_a, _b, next) => next() as Promise<void>,
    stop: resolved,
    later: (_a, _b, _next, pending) => pending.then(nothing),
  };
}

/**
 * The Node layer's verdict writer: the shared {@link verdictWriter} over the Node response, the framework
 * filling only what it alone knows.
 */
export function nodeVerdictWriter<A, B, N, R>(
  framework: NodeFramework<A, B, N>,
  style: MiddlewareStyle<A, B, N, R>,
  report: (error: unknown, stage: AdapterStage) => void,
): VerdictWriter<A, B, N, R> {
  const { response } = framework;
  const sent = framework.sent ?? ((a: A, b: B) => response(a, b).headersSent);
  return verdictWriter<A, B, N, R>(
    {
      ...style,
      setInfo: framework.setInfo,
      sent,
      setHeaders: framework.setHeaders ?? ((a, b, headers) => setHeaders(response(a, b), headers)),
      whenDone: (a, b, next, onResponse) => {
        reportWhenDone(response(a, b), onResponse, framework.responseHeader?.(a, b));
        return next;
      },
      wait: (a, b, ms) => waitUnlessClosed(response(a, b), ms),
      left: framework.left ?? nothing,
      onDenied: framework.onDenied,
      answered: framework.answered ?? ((a, b) => (sent(a, b) ? b : undefined)),
      sendDenied:
        // A denial with a page (the challenge stage, to a browser) goes out as HTML on every framework.
        (a, b, denied) => {
          if (denied.html === undefined) return framework.sendDenied(a, b, denied);
          if (framework.sendPage !== undefined) return framework.sendPage(a, b, denied);
          sendChallengePage(response(a, b), denied);
          return (framework.left ?? nothing)(a, b, undefined as N);
        },
    },
    report,
  );
}
