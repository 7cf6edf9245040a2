/**
 * The parts of undici's dispatcher API (v7 handlers) the interceptor uses, written out so that
 * @sluice/client needs no undici at run time nor in its types; undici's own types fit them.
 */

/** Header values as undici hands them to a handler. */
export type UndiciHeaderValues = Record<string, string | string[] | undefined>;

/** undici's `DispatchController`: what a handler uses to pause, resume or abort a request. */
export interface UndiciController {
  readonly aborted: boolean;
  readonly paused: boolean;
  readonly reason: Error | null;
  abort(reason: Error): void;
  pause(): void;
  resume(): void;
}

/** undici's `DispatchHandler` (the v7 callbacks). */
export interface UndiciHandler {
  onRequestStart?(controller: UndiciController, context: unknown): void;
  onRequestUpgrade?(
    controller: UndiciController,
    statusCode: number,
    headers: UndiciHeaderValues,
    socket: unknown,
  ): void;
  onResponseStart?(
    controller: UndiciController,
    statusCode: number,
    headers: UndiciHeaderValues,
    statusMessage?: string,
  ): void;
  onResponseData?(controller: UndiciController, chunk: Uint8Array): void;
  onResponseEnd?(controller: UndiciController, trailers: UndiciHeaderValues): void;
  onResponseError?(controller: UndiciController, error: Error): void;
}

/** Request headers in any form undici takes them. */
export type UndiciRequestHeaders =
  | Record<string, string | string[] | undefined>
  | string[]
  | Iterable<[string, string | string[] | undefined]>
  | null;

/** undici's `DispatchOptions`, the fields read here. */
export interface UndiciDispatchOptions {
  origin?: string | URL;
  path: string;
  method: string;
  body?: unknown;
  headers?: UndiciRequestHeaders;
}

/** undici's `Dispatcher['dispatch']`, over undici's own options type `O`. */
export type UndiciDispatch<O extends UndiciDispatchOptions = UndiciDispatchOptions> = (
  options: O,
  handler: UndiciHandler,
) => boolean;

/** An interceptor for `dispatcher.compose(...)`; generic so that undici's option types pass through unchanged. */
export type UndiciInterceptor = <O extends UndiciDispatchOptions>(
  dispatch: UndiciDispatch<O>,
) => UndiciDispatch<O>;
