import type { NoRetryReason } from './plan.js';

/** Why the client waits before sending. */
export type WaitReason = 'pacing' | 'retry';

/** The client is about to wait before sending a request. */
export interface WaitEvent {
  /** `scheme://host:port` of the request; never the path or query, which may hold keys. */
  readonly origin: string;
  readonly method: string;
  readonly reason: WaitReason;
  readonly ms: number;
  /** The attempt about to be sent after the wait, 1 for the first. */
  readonly attempt: number;
  /** The policy that set a pacing wait ('' when the server names none). */
  readonly policy?: string;
}

/** What a refusal's body said: `THROTTLED`, a GraphQL error (its status may be 200 or 429). */
export type RefusalCode = 'THROTTLED';

/** A refused response (429, 503, a GraphQL THROTTLED error) will be retried. */
export interface RetryEvent {
  readonly origin: string;
  readonly method: string;
  readonly status: number;
  /** Set when the body refused the call: a GraphQL THROTTLED error. */
  readonly code?: RefusalCode;
  /** The attempt that was refused, 1 for the first. */
  readonly attempt: number;
  /** The wait before the next attempt, ms. */
  readonly delayMs: number;
}

/** Why a refused response goes back to the caller without a retry. */
export type GiveUpReason = NoRetryReason | 'max_attempts' | 'wait_too_long' | 'budget_exhausted';

/** A refused response goes back to the caller. */
export interface GiveUpEvent {
  readonly origin: string;
  readonly method: string;
  readonly status: number;
  /** Set when the body refused the call: a GraphQL THROTTLED error. */
  readonly code?: RefusalCode;
  readonly attempt: number;
  readonly reason: GiveUpReason;
}

/** A server's proof-of-work challenge was solved, and the request is sent again with the solution. */
export interface SolvedEvent {
  readonly origin: string;
  readonly method: string;
  /** Leading zero bits asked for. */
  readonly difficulty: number;
  /** Time spent solving, ms. */
  readonly ms: number;
}

/** Hooks for logs and metrics; a hook that throws is ignored, it never fails the request. */
export interface ClientEvents {
  wait?(event: WaitEvent): void;
  retry?(event: RetryEvent): void;
  /** The origin's retry budget is spent: the refused response goes back at once. */
  budgetExhausted?(event: GiveUpEvent): void;
  /** Any refused response given back without a retry (the budget included). */
  giveUp?(event: GiveUpEvent): void;
  /** A challenge was solved (see the `challenge` option). */
  solved?(event: SolvedEvent): void;
}

/** Calls a hook, keeping its failure away from the request. */
export function emit<E>(hook: ((event: E) => void) | undefined, event: E): void {
  if (hook === undefined) return;
  try {
    hook(event);
  } catch {
    // A logging or metrics bug must not fail the caller's request.
  }
}
