import type { Sleep } from '@sluice/client';

/**
 * One clock for a Sluice server and a client under test: the client's waits move it forward at once, so
 * a test of a 10-second Retry-After takes no time and the server sees exactly the wait the client made.
 * For one request at a time (concurrent sleepers would each move the clock by their own wait).
 */
export class VirtualTime {
  now: number;
  /** Every wait asked for, in order. */
  readonly waits: number[] = [];

  constructor(start: number) {
    this.now = start;
  }

  readonly clock = (): number => this.now;

  readonly sleep: Sleep = async (ms, signal) => {
    if (signal?.aborted) throw signal.reason;
    this.waits.push(ms);
    this.now += ms;
    await new Promise((resolve) => setImmediate(resolve));
  };
}
