import type { ServerResponse } from 'node:http';
import type { DeniedBody, DeniedResponse, HeaderValues } from '../fields/responses.js';
import type { RateLimitInfo } from './info.js';
import { reportWhenDone, waitUnlessClosed } from './node.js';
import type { AdapterStage } from './options.js';
import { PAGE_TYPE } from './page.js';
import type { ResponseListener } from './verdict.js';
import { type VerdictWriter, verdictWriter } from './writer.js';

/** A fetch-style middleware's `next`: runs the rest of the chain. */
export type FetchNext = () => Promise<unknown>;

/**
 * What only a fetch-style framework knows for the fetch layer, about its per-request context `C`.
 * The RateLimit headers, the response's end, the leaky_bucket wait and the denial's headers are the layer's.
 */
export interface FetchFramework<C> {
  /** The request's Fetch `Request`: its `signal` tells when the client leaves. */
  request(c: C): Request;
  /** The response the chain holds so far: the RateLimit headers go on its `headers`. */
  response(c: C): Response;
  /** True once an earlier middleware set the response: it is left alone then, counted but never touched. */
  sent(c: C): boolean;
  /** The Node response under the context when served by Node (its end is then heard there), else undefined. */
  nodeResponse(c: C): ServerResponse | undefined;
  /** Exposes the request's limit to handlers (`c.get('rateLimit')`, say). */
  setInfo(c: C, info: RateLimitInfo): void;
  /** The app's own `onDenied`: a Response of its own, or one set on the context; undefined when it has none. */
  readonly onDenied: ((c: C, denied: DeniedResponse) => unknown) | undefined;
  /** The default denial's response, a JSON body with its status. */
  json(c: C, body: DeniedBody, status: number): Response;
}

const nothing = (): undefined => undefined;
const responseOrNothing = (value: unknown): Response | undefined =>
  value instanceof Response ? value : undefined;

/**
 * The fetch layer's verdict writer: the shared {@link verdictWriter} over Fetch's `Request`, `Response` and
 * `Headers`. Its middleware resolves with the denial's Response, or undefined when it went on.
 */
export function fetchVerdictWriter<C, N extends FetchNext>(
  framework: FetchFramework<C>,
  report: (error: unknown, stage: AdapterStage) => void,
): VerdictWriter<C, C, N, Promise<Response | undefined>> {
  const { onDenied, response } = framework;
  return verdictWriter<C, C, N, Promise<Response | undefined>>(
    {
      proceed: (_c, _same, next) => next().then(nothing),
      stop: () => Promise.resolve(undefined),
      later: (_c, _same, _next, pending) => pending.then(responseOrNothing),
      setInfo: (c, _same, info) => framework.setInfo(c, info),
      sent: (c) => framework.sent(c),
      // On the response the chain holds: the framework merges these into a Response a handler returns, too.
      setHeaders: (c, _same, headers) => setFetchHeaders(response(c).headers, headers),
      whenDone: (c, _same, next, onResponse) => reportingNext(framework, c, next, onResponse),
      wait: (c, _same, ms) => waitUnlessGone(framework, c, ms),
      // The client left while waiting: nothing is served (the status is for logs only).
      left: () => new Response(null, { status: 499 }),
      // The headers already on the held response are laid over the one returned: the denial's go there
      // first, so a response of your own keeps the headers it sets.
      onDenied:
        onDenied &&
        ((c, _same, denied) => {
          setFetchHeaders(response(c).headers, denied.headers);
          return onDenied(c, denied);
        }),
      // Your Response, or what you set on the context; none (or a throw): the default, as over Node.
      answered: (c, _same, own, threw) => {
        if (threw) return undefined;
        if (own instanceof Response) return keepingHeaders(response(c).headers, own);
        return framework.sent(c) ? response(c) : undefined;
      },
      sendDenied: (c, _same, denied) => {
        setFetchHeaders(response(c).headers, denied.headers);
        if (denied.html === undefined) return framework.json(c, denied.body, denied.status);
        // The challenge page, to a browser.
        const headers = new Headers(response(c).headers);
        headers.set('Content-Type', PAGE_TYPE);
        return new Response(denied.html, { status: denied.status, headers });
      },
    },
    report,
  );
}

function setFetchHeaders(target: Headers, headers: HeaderValues): void {
  for (const name in headers) target.set(name, headers[name] as string);
}

/** `own`, its headers left as they are when the framework merges `earlier` into it. */
function keepingHeaders(earlier: Headers, own: Response): Response {
  for (const name of own.headers.keys()) earlier.delete(name);
  return own;
}

/**
 * Reports how the exchange ended, and returns the `next` to carry on with. On Node: the response's status when
 * it is written, undefined when its connection closes first (an aborted client), as over Node.
 * Elsewhere: the status of the response the chain produced (a streamed body may still be flowing then), or
 * undefined when the request is aborted first. The verdict hears only the first report.
 */
function reportingNext<C, N extends FetchNext>(
  framework: FetchFramework<C>,
  c: C,
  next: N,
  onResponse: ResponseListener,
): N {
  const res = framework.nodeResponse(c);
  if (res !== undefined) {
    // Headers a Response carries reach Node in writeHead, where getHeader does not see them: read both.
    reportWhenDone(res, (status, header) =>
      onResponse(status, (name) => header(name) ?? framework.response(c).headers.get(name) ?? undefined),
    );
    return next;
  }
  const signal = framework.request(c).signal;
  const aborted = (): void => onResponse(undefined);
  signal.addEventListener('abort', aborted, { once: true });
  return (() =>
    next().finally(() => {
      signal.removeEventListener('abort', aborted);
      const response = framework.response(c);
      onResponse(response.status, (name) => response.headers.get(name) ?? undefined);
    })) as N;
}

/**
 * Waits `ms` (a leaky_bucket delay) unless the client goes first. Resolves true when the request should
 * proceed, false when there is no one left to serve.
 */
function waitUnlessGone<C>(framework: FetchFramework<C>, c: C, ms: number): Promise<boolean> {
  const res = framework.nodeResponse(c);
  if (res !== undefined) return waitUnlessClosed(res, ms);
  const signal = framework.request(c).signal;
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
