import { Transform, type TransformCallback } from 'node:stream';
import { ConfigError, checkOptionNames, type Decision, type Descriptors, type Limiter } from '@sluice/core';

/** Options of {@link byteThrottle}. */
export interface ByteThrottleOptions {
  /**
   * The limiter whose rules pace the bytes: each piece of a stream is checked with its size as the cost.
   * A `leaky_bucket` rule (`{requests: 50_000, per: '1s', burst: 65_536}`: 50 KB/s) queues it; a window or
   * token rule over its limit makes it wait for its Retry-After. A limiter of its own: its rules see only bytes.
   */
  limiter: Limiter;
  /** Largest piece checked at once, in bytes (a chunk is cut to it); at most the rules' burst. Default 16384. */
  chunkBytes?: number;
}

/** Paces streams by bytes: `pipeline(file, throttle.stream({user}), res)`. */
export interface ByteThrottle {
  /**
   * A Transform passing bytes on no faster than the rules allow for these descriptors; streams with the
   * same key share the rate. Destroyed while it waits (the client left), it gives its queue place back.
   */
  stream(descriptors: Descriptors): Transform;
}

/** A piece that no rule lets through ever (larger than a rule's burst or limit): the stream fails with it. */
export class ThrottlePieceTooLargeError extends Error {
  readonly code = 'SLUICE_THROTTLE_PIECE_TOO_LARGE';
  constructor(bytes: number, rule: string | undefined) {
    super(`a piece of ${bytes} bytes never fits rule ${rule ?? '?'}: lower chunkBytes or raise its burst`);
    this.name = 'ThrottlePieceTooLargeError';
  }
}

const OPTIONS: readonly (keyof ByteThrottleOptions)[] = ['limiter', 'chunkBytes'];

/** Builds a byte throttle on a limiter, for downloads (a response body) and uploads (a request body). */
export function byteThrottle(options: ByteThrottleOptions): ByteThrottle {
  checkOptionNames('byteThrottle', options, OPTIONS);
  const { limiter, chunkBytes = 16_384 } = options;
  if (typeof limiter?.check !== 'function') throw new ConfigError('byteThrottle: limiter must be a Limiter');
  if (!(Number.isInteger(chunkBytes) && chunkBytes > 0))
    throw new ConfigError(`byteThrottle: chunkBytes must be a positive integer, got ${String(chunkBytes)}`);
  return { stream: (descriptors) => new ThrottleStream(limiter, descriptors, chunkBytes) };
}

/** One paced stream: each piece waits for its place, then goes on. */
class ThrottleStream extends Transform {
  readonly #limiter: Limiter;
  readonly #descriptors: Descriptors;
  readonly #chunkBytes: number;
  /** Wakes the current wait early (false: the stream was destroyed). */
  #wake: ((served: boolean) => void) | undefined;

  constructor(limiter: Limiter, descriptors: Descriptors, chunkBytes: number) {
    super();
    this.#limiter = limiter;
    this.#descriptors = descriptors;
    this.#chunkBytes = chunkBytes;
  }

  override _transform(chunk: Buffer | string, encoding: BufferEncoding, done: TransformCallback): void {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, encoding) : chunk;
    this.#pace(bytes).then(() => done(), done);
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    this.#wake?.(false);
    done(error);
  }

  async #pace(bytes: Buffer): Promise<void> {
    for (let at = 0; at < bytes.length && !this.destroyed; at += this.#chunkBytes) {
      const piece = bytes.subarray(at, at + this.#chunkBytes);
      if (await this.#admit(piece.length)) this.push(piece);
    }
  }

  /** Waits until a piece of `bytes` may go; false when the stream was destroyed meanwhile. */
  async #admit(bytes: number): Promise<boolean> {
    for (;;) {
      const decision = await this.#limiter.check(this.#descriptors, { cost: bytes });
      if (decision.allowed) return this.#served(decision);
      if (!Number.isFinite(decision.retryAfterMs)) throw new ThrottlePieceTooLargeError(bytes, decision.rule);
      if (!(await this.#sleep(Math.max(1, decision.retryAfterMs)))) return false;
    }
  }

  /** An admitted piece waits its `delayMs` (leaky_bucket); a stream gone meanwhile gives its place back. */
  async #served(decision: Decision): Promise<boolean> {
    const served = !this.destroyed && (decision.delayMs <= 0 || (await this.#sleep(decision.delayMs)));
    // A piece holds nothing past its turn: leases (a concurrency rule) go back now, a place unserved too.
    if (!served) await this.#limiter.cancel(decision);
    else if (decision.leases.length > 0) await this.#limiter.release(decision);
    return served;
  }

  #sleep(ms: number): Promise<boolean> {
    if (this.destroyed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.#wake?.(true), ms);
      this.#wake = (served) => {
        clearTimeout(timer);
        this.#wake = undefined;
        resolve(served);
      };
    });
  }
}
