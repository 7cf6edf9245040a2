import { nextWait, observe, paced, type Target, waitToRetry } from './attempts.js';
import { ControllerProxy } from './controllerProxy.js';
import { type ClientOptions, type ResolvedClientOptions, resolveOptions } from './options.js';
import { type OriginState, Origins } from './origins.js';
import { IDEMPOTENCY_KEY, isIdempotent, type NoRetryReason, retryHeaders } from './plan.js';
import { headerRecord, headerSource } from './undiciHeaders.js';
import type {
  UndiciController,
  UndiciDispatch,
  UndiciDispatchOptions,
  UndiciHandler,
  UndiciHeaderValues,
  UndiciInterceptor,
} from './undiciTypes.js';

/** Options of {@link sluiceInterceptor}: those of `createFetch`, less `fetch`, `estimate` and `graphql` (fetch only). */
export type InterceptorOptions = Omit<ClientOptions, 'fetch' | 'estimate' | 'graphql'>;

/**
 * The client as an undici interceptor, for code that uses undici directly (`request`, `stream`, a
 * `Pool`): `new Agent().compose(sluiceInterceptor(options))`. The same pacing, Retry-After with jitter,
 * budget, attempts and events as `createFetch`; a refused answer that is retried never reaches the
 * handler, the last one does. Bodies: a string or bytes are sent again, a stream or iterable only once.
 */
export function sluiceInterceptor(options?: InterceptorOptions): UndiciInterceptor {
  const settings = resolveOptions(options);
  const origins = new Origins(settings);
  return <O extends UndiciDispatchOptions>(dispatch: UndiciDispatch<O>) =>
    function sluiceDispatch(opts: O, handler: UndiciHandler): boolean {
      let request: DispatchPlan<O>;
      try {
        request = planDispatch(opts, settings);
      } catch {
        // No origin, say: undici gives the error it always gives.
        return dispatch(opts, handler);
      }
      new RetryingDispatch(settings, origins.get(request.url.origin), dispatch, request, handler).start();
      return true;
    };
}

/** One dispatch's attempts: the target, and the options of each attempt. */
interface DispatchPlan<O extends UndiciDispatchOptions> extends Target {
  readonly signal: AbortSignal;
  readonly abort: AbortController;
  options(attempt: number): O;
}

function planDispatch<O extends UndiciDispatchOptions>(
  opts: O,
  settings: ResolvedClientOptions,
): DispatchPlan<O> {
  if (opts.origin === undefined) throw new TypeError('no origin');
  const url = new URL(opts.path, opts.origin);
  const method = opts.method.toUpperCase();
  const headers = headerRecord(opts.headers);
  const makeKey = isIdempotent(method) || IDEMPOTENCY_KEY in headers ? false : settings.idempotencyKey;
  if (makeKey !== false) headers[IDEMPOTENCY_KEY] = makeKey();
  const safe = isIdempotent(method) || IDEMPOTENCY_KEY in headers;
  const replayable =
    opts.body === undefined ||
    opts.body === null ||
    typeof opts.body === 'string' ||
    opts.body instanceof Uint8Array;
  const noRetry: NoRetryReason | undefined = !safe
    ? 'not_idempotent'
    : !replayable
      ? 'body_not_replayable'
      : undefined;
  const abort = new AbortController();
  return {
    url,
    method,
    noRetry,
    abort,
    signal: abort.signal,
    options(attempt) {
      return { ...opts, headers: { ...headers, ...retryHeaders(settings, attempt) } };
    },
  };
}

/** What became of one attempt: its answer went to the caller, or it was refused and drained. */
type Outcome = { readonly forwarded: true } | { readonly forwarded: false; readonly waitMs: number };

/** Runs the attempts of one dispatch, as the handler of each. */
class RetryingDispatch<O extends UndiciDispatchOptions> implements UndiciHandler {
  readonly #settings: ResolvedClientOptions;
  readonly #state: OriginState;
  readonly #dispatch: UndiciDispatch<O>;
  readonly #plan: DispatchPlan<O>;
  readonly #downstream: UndiciHandler;
  readonly #proxy: ControllerProxy;
  #attempt = 0;
  #seq = 0;
  #probe = false;
  /** The answer of the current attempt goes to the caller. */
  #forwarding = false;
  #refusedWaitMs = 0;
  #settle: ((outcome: Outcome) => void) | undefined;
  #fail: ((error: unknown) => void) | undefined;
  #finished = false;

  constructor(
    settings: ResolvedClientOptions,
    state: OriginState,
    dispatch: UndiciDispatch<O>,
    plan: DispatchPlan<O>,
    downstream: UndiciHandler,
  ) {
    this.#settings = settings;
    this.#state = state;
    this.#dispatch = dispatch;
    this.#plan = plan;
    this.#downstream = downstream;
    this.#proxy = new ControllerProxy(plan.abort);
  }

  start(): void {
    // The caller holds its controller from the start, so that it can abort the waits too.
    this.#downstream.onRequestStart?.(this.#proxy, {});
    this.#run().catch((error: unknown) => this.#error(error));
  }

  async #run(): Promise<void> {
    this.#state.budget?.earn();
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.#send(attempt);
      if (outcome.forwarded) return;
      await waitToRetry(this.#settings, this.#plan, attempt + 1, outcome.waitMs);
    }
  }

  /** Sends one attempt in its pacing slot (the first to an origin alone: see FirstAnswer). */
  async #send(attempt: number): Promise<Outcome> {
    const settings = this.#settings;
    this.#probe = settings.pacing && (await this.#state.firstAnswer.turn(this.#plan.signal));
    try {
      this.#seq = await paced(settings, this.#state, this.#plan, attempt);
    } catch (error) {
      this.#settleProbe(false);
      throw error;
    }
    this.#attempt = attempt;
    this.#forwarding = false;
    return new Promise<Outcome>((resolve, reject) => {
      this.#settle = resolve;
      this.#fail = reject;
      this.#dispatch(this.#plan.options(attempt), this);
    });
  }

  #settleProbe(answered: boolean): void {
    if (!this.#probe) return;
    this.#probe = false;
    this.#state.firstAnswer.settle(answered);
  }

  #error(error: unknown): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#downstream.onResponseError?.(
      this.#proxy,
      error instanceof Error ? error : new Error(String(error)),
    );
  }

  onRequestStart(controller: UndiciController): void {
    this.#proxy.target = controller;
    if (this.#plan.signal.aborted) controller.abort(this.#plan.signal.reason as Error);
  }

  onRequestUpgrade(
    _controller: UndiciController,
    statusCode: number,
    headers: UndiciHeaderValues,
    socket: unknown,
  ): void {
    this.#downstream.onRequestUpgrade?.(this.#proxy, statusCode, headers, socket);
  }

  onResponseStart(
    _controller: UndiciController,
    statusCode: number,
    headers: UndiciHeaderValues,
    statusMessage?: string,
  ): void {
    const settings = this.#settings;
    const source = headerSource(headers);
    const infos = observe(settings, this.#state, this.#plan, this.#seq, source);
    this.#settleProbe(true);
    if (statusCode >= 200 && settings.retryOn.has(statusCode)) {
      const answer = { status: statusCode, attempt: this.#attempt, headers: source };
      const waitMs = nextWait(settings, this.#state, this.#plan, answer, infos);
      if (waitMs !== undefined) {
        // Refused and to be retried: the caller never sees this answer; its body is read and dropped.
        this.#refusedWaitMs = waitMs;
        return;
      }
    }
    this.#forwarding = true;
    this.#downstream.onResponseStart?.(this.#proxy, statusCode, headers, statusMessage);
  }

  onResponseData(_controller: UndiciController, chunk: Uint8Array): void {
    if (this.#forwarding) this.#downstream.onResponseData?.(this.#proxy, chunk);
  }

  onResponseEnd(_controller: UndiciController, trailers: UndiciHeaderValues): void {
    this.#proxy.target = undefined;
    if (this.#forwarding) {
      this.#finished = true;
      this.#downstream.onResponseEnd?.(this.#proxy, trailers);
      this.#settle?.({ forwarded: true });
    } else this.#settle?.({ forwarded: false, waitMs: this.#refusedWaitMs });
  }

  onResponseError(_controller: UndiciController, error: Error): void {
    this.#proxy.target = undefined;
    this.#settleProbe(false);
    this.#fail?.(this.#plan.signal.aborted ? this.#plan.signal.reason : error);
  }
}
