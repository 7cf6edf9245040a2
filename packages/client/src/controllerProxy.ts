import type { UndiciController } from './undiciTypes.js';

/**
 * The controller the caller's handler holds for the whole request: each attempt is a dispatch with its
 * own controller, and an abort must also reach the waits between attempts.
 */
export class ControllerProxy implements UndiciController {
  target: UndiciController | undefined;
  readonly #abort: AbortController;

  constructor(abort: AbortController) {
    this.#abort = abort;
  }

  get aborted(): boolean {
    return this.#abort.signal.aborted;
  }

  get paused(): boolean {
    return this.target?.paused ?? false;
  }

  get reason(): Error | null {
    return this.aborted ? (this.#abort.signal.reason as Error) : null;
  }

  abort(reason: Error): void {
    this.#abort.abort(reason);
    this.target?.abort(reason);
  }

  pause(): void {
    this.target?.pause();
  }

  resume(): void {
    this.target?.resume();
  }
}
