import { type CheckResult, StoreError } from '@sluice/core/store';
import type { Group, GroupAnswer } from './scriptCall.js';

/**
 * Sends groups as ONE script call and answers each group's results (or its own error) in order. `inTurn`
 * is true when the call leaves during a turn that goes on (a full batch), false when it leaves at the end
 * of the turn.
 */
export type SendGroups = (groups: readonly Group[], inTurn: boolean) => Promise<GroupAnswer[]>;

/**
 * Calls in flight per target before new batches are held: one. Redis answers one connection's calls in
 * order, so a second call out only splits what one held batch would carry (bench/README.md, "Bigger
 * batches").
 */
const MAX_IN_FLIGHT = 1;

/** Options of {@link Coalescer}. */
export interface CoalescerOptions {
  /** A batch that reaches this many checks leaves at once. */
  readonly maxChecks: number;
  /**
   * The store's time limit now, ms (it follows Redis's latency): a held batch fails (open) this long after
   * its turn ended, sent or not.
   */
  readonly timeoutMs: () => number;
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
  readonly lane: Lane;
  readonly waiting: Waiting[];
  checks: number;
  /**
   * Set once its turn ended with the target busy (it is held: it leaves when a call of the target settles):
   * its time limit, performance.now() ms from the end of its turn. 0 while not held.
   */
  expiresAt: number;
  /**
   * A held batch whose target has room again (its call settled): it leaves at the end of this turn, taking the
   * requests the rest of the turn adds, instead of leaving them for the next round trip.
   */
  released: boolean;
  /** Left as a call; done once that call settled or its time limit passed. */
  state: 'open' | 'sent' | 'done';
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
 * share the call) and then leave as one script call. While a call of the target is out, the
 * batch is held instead and keeps collecting; it leaves at the end of the turn in which that call settles,
 * with the requests the rest of that turn adds (they would otherwise wait a whole round trip more), so a busy
 * store sends fewer, bigger calls and an idle one adds no wait. A batch that reaches `maxChecks` leaves at once.
 * A held batch keeps the store's time limit from the end of its turn: when it passes, its requests fail
 * (with a timeout, as a call that timed out) whether the batch left or not, so a hung call strands no one
 * longer than a call of its own would. A failed call fails each of its groups with the same error; a group
 * the script could not decide fails alone.
 */
export class Coalescer {
  readonly #send: SendGroups;
  readonly #maxChecks: number;
  readonly #timeoutMs: () => number;
  readonly #name: string;
  readonly #unsent: (groups: number) => void;
  readonly #lanes = new Map<number, Lane>();
  /** Lanes whose batch opened in this turn (a lane may appear twice: its batch filled and another opened). */
  #turn: Lane[] = [];
  #scheduled = false;
  /**
   * Held batches in the order they were held, so by time limit: one timer for all (a timer per held batch
   * cost more than the call it saved). Batches done are dropped from the front as new ones come.
   */
  #expiring: Batch[] = [];
  #expiryTimer: NodeJS.Timeout | undefined;
  readonly #flush = () => {
    this.#scheduled = false;
    const lanes = this.#turn;
    this.#turn = [];
    for (const lane of lanes) this.#endTurn(lane);
  };
  /** The extra turn (setImmediate) lets a reply already in the socket count, as the call's own timer does. */
  readonly #onExpiryTimer = () => {
    this.#expiryTimer = undefined;
    setImmediate(this.#expireDue);
  };
  readonly #expireDue = () => {
    const now = performance.now();
    const queue = this.#expiring;
    let head = 0;
    while (head < queue.length && (queue[head]!.state === 'done' || queue[head]!.expiresAt <= now)) {
      const batch = queue[head]!;
      head += 1;
      if (batch.state !== 'done') this.#expire(batch);
    }
    queue.splice(0, head);
    this.#armExpiry(now);
  };

  constructor(send: SendGroups, options: CoalescerOptions) {
    this.#send = send;
    this.#maxChecks = options.maxChecks;
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
        batch = { lane, waiting: [], checks: 0, expiresAt: 0, released: false, state: 'open' };
        lane.open = batch;
        this.#turn.push(lane);
        if (!this.#scheduled) {
          this.#scheduled = true;
          setImmediate(this.#flush);
        }
      }
      batch.waiting.push({ group, resolve, reject });
      batch.checks += group.checks.length;
      if (batch.checks >= this.#maxChecks) this.#leave(batch, true);
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
    if (batch === undefined || (batch.expiresAt > 0 && !batch.released)) return;
    if (lane.inFlight < MAX_IN_FLIGHT) {
      this.#leave(batch, false);
      return;
    }
    const now = performance.now();
    batch.expiresAt = now + this.#timeoutMs();
    const queue = this.#expiring;
    let done = 0;
    while (done < queue.length && queue[done]!.state === 'done') done += 1;
    if (done > 0) queue.splice(0, done);
    queue.push(batch);
    this.#armExpiry(now);
  }

  /** Sets the one timer for the first held batch not done, unless it is set. */
  #armExpiry(now: number): void {
    const first = this.#expiring[0];
    if (first === undefined || this.#expiryTimer !== undefined) return;
    this.#expiryTimer = setTimeout(this.#onExpiryTimer, Math.max(0, first.expiresAt - now));
    this.#expiryTimer.unref();
  }

  /** A held batch's time limit passed: its requests fail as timed out, sent or not. */
  #expire(batch: Batch): void {
    const error = new StoreError(
      'ERR_SLUICE_STORE_TIMEOUT',
      `${this.#name} did not answer within ${this.#timeoutMs()} ms`,
    );
    const lane = batch.lane;
    if (lane.open === batch) {
      lane.open = undefined;
      batch.state = 'done';
      this.#unsent(batch.waiting.length);
      this.#tidy(lane);
    }
    for (const w of batch.waiting) w.reject(error);
    this.#finish(batch);
  }

  /** Sends a batch; its lane counts the call in flight until it settles or its time limit passes. */
  #leave(batch: Batch, inTurn: boolean): void {
    const lane = batch.lane;
    if (lane.open === batch) lane.open = undefined;
    lane.inFlight += 1;
    batch.state = 'sent';
    const waiting = batch.waiting;
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
        this.#finish(batch);
      },
      (error: unknown) => {
        for (const w of waiting) w.reject(error);
        this.#finish(batch);
      },
    );
  }

  /** A sent batch's call settled or its time limit passed (the first of the two): the lane has room. */
  #finish(batch: Batch): void {
    if (batch.state !== 'sent') return;
    batch.state = 'done';
    const lane = batch.lane;
    lane.inFlight -= 1;
    const held = lane.open;
    if (held !== undefined && held.expiresAt > 0 && lane.inFlight < MAX_IN_FLIGHT) this.#release(held);
    else this.#tidy(lane);
  }

  /** A held batch goes with this turn's end (its time limit still runs from the end of its first turn). */
  #release(held: Batch): void {
    if (held.released) return;
    held.released = true;
    this.#turn.push(held.lane);
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#flush);
    }
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
