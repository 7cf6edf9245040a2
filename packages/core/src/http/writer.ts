import type { DeniedResponse, HeaderValues } from '../fields/responses.js';
import type { RateLimitInfo } from './info.js';
import type { AdapterStage } from './options.js';
import type { ResponseListener, Verdict } from './verdict.js';

/**
 * What a framework does for the shared verdict writer. `A`, `B` and `N` are what its middleware is called with
 * (req, res, next; request, reply, done; or the context twice, and next), handed to
 * every callback, so no closure is made per request; `R` is what the middleware returns.
 */
export interface VerdictIO<A, B, N, R> {
  /** Passes the request on. */
  proceed(a: A, b: B, next: N): R;
  /** Ends the middleware here (a response was sent before the limiter decided). */
  stop(a: A, b: B, next: N): R;
  /** Hands over the rest of the work, a promise: callback-style frameworks route its rejection, promise-style ones return it. */
  later(a: A, b: B, next: N, pending: Promise<unknown>): R;
  /** Exposes the request's limit to handlers (`req.rateLimit`, `ctx.state.rateLimit`...). */
  setInfo(a: A, b: B, info: RateLimitInfo): void;
  /** True once a response was sent (or set): it is left alone then, counted but never touched. */
  sent(a: A, b: B): boolean;
  setHeaders(a: A, b: B, headers: HeaderValues): void;
  /**
   * Calls `onResponse` once when the exchange ends, with the response's final status, or undefined when the
   * client left before a response (see `reportWhenDone` in node.ts); returns the `next` to go on with.
   */
  whenDone(a: A, b: B, next: N, onResponse: ResponseListener): N;
  /** Waits a leaky_bucket delay unless the client leaves first; true when there is someone to serve. */
  wait(a: A, b: B, ms: number): Promise<boolean>;
  /** What the middleware ends with when the client left during the wait (its queue place was given back). */
  left(a: A, b: B, next: N): unknown;
  /** The app's own `onDenied`, called with the framework's arguments; undefined when it has none. */
  readonly onDenied: ((a: A, b: B, denied: DeniedResponse) => unknown) | undefined;
  /** After `onDenied` (which returned `own`, or threw): the answer it gave, or undefined to send the default. */
  answered(a: A, b: B, own: unknown, threw: boolean): unknown;
  /** Sends the default denial (a JSON 429, 503 when a rule failed closed). */
  sendDenied(a: A, b: B, denied: DeniedResponse): unknown;
}

/**
 * Carries out a verdict: on to the route, or a denial; built once per adapter. A pending verdict (what
 * `check` returns when it had to wait) is carried out once settled, through `later`.
 */
export type VerdictWriter<A, B, N, R> = (a: A, b: B, next: N, verdict: Verdict | Promise<Verdict>) => R;

/**
 * The one verdict writer every adapter shares: skip, allow (headers, the response's end reported when the
 * verdict asks, a leaky_bucket delay) and deny (the app's `onDenied`, then the default unless it answered). A response an
 * earlier middleware already sent is left alone.
 */
export function verdictWriter<A, B, N, R>(
  io: VerdictIO<A, B, N, R>,
  report: (error: unknown, stage: AdapterStage) => void,
): VerdictWriter<A, B, N, R> {
  return function act(a, b, next, verdict): R {
    if (verdict instanceof Promise)
      return io.later(
        a,
        b,
        next,
        verdict.then((v) => act(a, b, next, v)),
      );
    if (verdict.action === 'skip') return io.proceed(a, b, next);
    io.setInfo(a, b, verdict.info);
    if (verdict.action === 'deny') {
      return io.sent(a, b) ? io.stop(a, b, next) : io.later(a, b, next, deny(a, b, verdict.denied));
    }
    if (!io.sent(a, b)) io.setHeaders(a, b, verdict.headers);
    // How the response ends, for leases, `count` refunds and adaptive rules; nothing to hear (the usual
    // case): no listener.
    const { onResponse } = verdict;
    if (verdict.delayMs <= 0)
      return io.proceed(a, b, onResponse === undefined ? next : io.whenDone(a, b, next, onResponse));
    const waited = io
      .wait(a, b, verdict.delayMs)
      // Heard from once served; the client left while waiting: serve nothing, its queue place goes back.
      .then((stillThere) =>
        stillThere
          ? io.proceed(a, b, onResponse === undefined ? next : io.whenDone(a, b, next, onResponse))
          : verdict.cancel().then(() => io.left(a, b, next)),
      );
    return io.later(a, b, next, waited);
  };

  /** The app's `onDenied`, then the default denial unless it answered; resolves with the answer. */
  async function deny(a: A, b: B, denied: DeniedResponse): Promise<unknown> {
    const { onDenied } = io;
    if (onDenied !== undefined) {
      let own: unknown;
      let threw = false;
      try {
        own = await onDenied(a, b, denied);
      } catch (error) {
        threw = true;
        report(error, 'on_denied');
      }
      const answer = io.answered(a, b, own, threw);
      if (answer !== undefined) return answer;
    }
    return io.sendDenied(a, b, denied);
  }
}
