import { type CheckResult, StoreError } from '@sluice/core';
import type { Group, GroupAnswer } from './scriptCall.js';

/**
 * Sends groups as ONE script call and answers each group's results (or its own error) in order. `inTurn`
 * is true when the call leaves during a turn that goes on (a full batch, or a held batch let go when a
 * call answered), false when it leaves at the end of the turn.
 */
export type SendGroups = (groups: readonly Group[], inTurn: boolean) => Promise<GroupAnswer[]>;

/**
 * Calls in flight per target before new batches are held: one. Measured against two (bench/README.md,
 * "Bigger batches"): two halves the batch under load for no gain in latency on one connection, which
 * Redis answers in order anyway.
 */
export const DEFAULT_MAX_IN_FLIGHT = 1;

/** Options of {@link Coalescer}. */
export interface CoalescerOptions {
  /** A batch that reaches this many checks leaves at once. */
  readonly maxChecks: number;
  /** The store's time limit, ms: a held batch fails (open) this long after its turn ended, sent or not. */
  readonly timeoutMs: number;
  /** Calls per target in flight before batches are held. Default {@link DEFAULT_MAX_IN_FLIGHT}. */
  readonly maxInFlight?: number;
  /** Names the store in errors (`Redis`). */
  readonly name: string;
  /** Called with the number of groups that expired held, never sent (so never tracked as a call). */
  readonly unsent: (groups: number) => void;
}

interface Waiting {
  readonly group: Group;
  resolve(results: CheckResult[]): void;
  reject(error: unknown): void;
}

/** The groups going together to one target, and their check count. */
interface Batch {
  readonly waiting: Waiting[];
  checks: number;
  /** True once its turn ended with the target busy: it leaves when a call of the target settles. */
  held: boolean;
  /** A held batch's time limit, from the end of its turn (sent or not). */
  deadline: NodeJS.Timeout | undefined;
  /** Ends its call's place in flight, once; set when it leaves. */
  finish: (() => void) | undefined;
}

/** One target (a Cluster slot; 0 on a single server): its calls in flight and the batch filling up. */
interface Lane {
  readonly target: number;
  inFlight: number;
  open: Batch | undefined;
}

/**
 * Coalesces evaluations per target: groups submitted in one turn of the event loop wait until the turn
 * ends (setImmediate, after the I/O callbacks of this loop iteration, so requests that arrived together
 * share the call) and then leave as one script call. While `maxInFlight` calls of the target are out, the
 * batch is held instead and keeps collecting; it leaves the moment one of them settles, so a busy store
 * sends fewer, bigger calls and an idle one adds no wait. A batch that reaches `maxChecks` leaves at once.
 * A held batch keeps the store's time limit from the end of its turn: when it passes, its requests fail
 * (with a timeout, as a call that timed out) whether the batch left or not, so a hung call strands no one
 * longer than a call of its own would. A failed call fails each of its groups with the same error; a group
 * the script could not decide fails alone.
 */
export class Coalescer {
  readonly #send: SendGroups;
  readonly #maxChecks: number;
  readonly #maxInFlight: number;
  readonly #timeoutMs: number;
  readonly #name: string;
  readonly #unsent: (groups: number) => void;
  readonly #lanes = new Map<number, Lane>();
  /** Lanes whose batch opened in this turn (a lane may appear twice: its batch filled and another opened). */
  #turn: Lane[] = [];
  #scheduled = false;
  readonly #flush = () => {
    this.#scheduled = false;
    const lanes = this.#turn;
    this.#turn = [];
    for (const lane of lanes) this.#endTurn(lane);
  };

  constructor(send: SendGroups, options: CoalescerOptions) {
    this.#send = send;
    this.#maxChecks = options.maxChecks;
    this.#maxInFlight = options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT;
    this.#timeoutMs = options.timeoutMs;
    this.#name = options.name;
    this.#unsent = options.unsent;
  }

  /** Adds a group to the batch of `target`; resolves with the group's results. */
  submit(target: number, group: Group): Promise<CheckResult[]> {
    return new Promise<CheckResult[]>((resolve, reject) => {
      const lane = this.#laneOf(target);
      let batch = lane.open;
      if (batch === undefined) {
        batch = { waiting: [], checks: 0, held: false, deadline: undefined, finish: undefined };
        lane.open = batch;
        this.#turn.push(lane);
        if (!this.#scheduled) {
          this.#scheduled = true;
          setImmediate(this.#flush);
        }
      }
      batch.waiting.push({ group, resolve, reject });
      batch.checks += group.checks.length;
      if (batch.checks >= this.#maxChecks) this.#leave(lane, batch, true);
    });
  }

  #laneOf(target: number): Lane {
    let lane = this.#lanes.get(target);
    if (lane === undefined) {
      lane = { target, inFlight: 0, open: undefined };
      this.#lanes.set(target, lane);
    }
    return lane;
  }

  /** The end of the turn a batch opened in: it leaves, or is held while the target is busy. */
  #endTurn(lane: Lane): void {
    const batch = lane.open;
    if (batch === undefined || batch.held) return;
    if (lane.inFlight < this.#maxInFlight) {
      this.#leave(lane, batch, false);
      return;
    }
    batch.held = true;
    batch.deadline = setTimeout(() => setImmediate(() => this.#expire(lane, batch)), this.#timeoutMs);
    batch.deadline.unref();
  }

  /**
   * A held batch's time limit passed. The extra turn (setImmediate) lets a reply already in the socket
   * count, as the call's own timer does.
   */
  #expire(lane: Lane, batch: Batch): void {
    const error = new StoreError(
      'ERR_SLUICE_STORE_TIMEOUT',
      `${this.#name} did not answer within ${this.#timeoutMs} ms`,
    );
    if (lane.open === batch) {
      lane.open = undefined;
      this.#unsent(batch.waiting.length);
      this.#tidy(lane);
    }
    for (const w of batch.waiting) w.reject(error);
    batch.finish?.();
  }

  /** Sends a batch; its lane counts the call in flight until it settles or its time limit passes. */
  #leave(lane: Lane, batch: Batch, inTurn: boolean): void {
    if (lane.open === batch) lane.open = undefined;
    lane.inFlight += 1;
    const waiting = batch.waiting;
    let finished = false;
    batch.finish = () => {
      if (finished) return;
      finished = true;
      clearTimeout(batch.deadline);
      lane.inFlight -= 1;
      this.#next(lane);
    };
    let sent: Promise<GroupAnswer[]>;
    try {
      sent = this.#send(
        waiting.map((w) => w.group),
        inTurn,
      );
    } catch (error) {
      sent = Promise.reject(error);
    }
    sent.then(
      (answers) => {
        for (let i = 0; i < waiting.length; i++) settle(waiting[i]!, answers[i]!);
        batch.finish?.();
      },
      (error: unknown) => {
        for (const w of waiting) w.reject(error);
        batch.finish?.();
      },
    );
  }

  /** A call of the lane settled: its held batch leaves now (in this turn), if it may. */
  #next(lane: Lane): void {
    const held = lane.open;
    if (held?.held === true && lane.inFlight < this.#maxInFlight) this.#leave(lane, held, true);
    else this.#tidy(lane);
  }

  /** Forgets an idle lane, so a Cluster's many slots leave no entries behind. */
  #tidy(lane: Lane): void {
    if (lane.inFlight === 0 && lane.open === undefined) this.#lanes.delete(lane.target);
  }
}

function settle(waiting: Waiting, answer: GroupAnswer): void {
  if (answer instanceof Error) waiting.reject(answer);
  else waiting.resolve(answer);
}
