import type { CheckResult } from '@sluice/core';
import type { Group, GroupAnswer } from './scriptCall.js';

/**
 * Sends groups as ONE script call and answers each group's results (or its own error) in order. `inTurn`
 * is true when the call leaves during the turn that made it (a full batch), false when it leaves at the
 * end of the turn.
 */
export type SendGroups = (groups: readonly Group[], inTurn: boolean) => Promise<GroupAnswer[]>;

interface Waiting {
  readonly group: Group;
  resolve(results: CheckResult[]): void;
  reject(error: unknown): void;
}

/** The groups waiting for one target (a Cluster slot; 0 on a single server), and their check count. */
interface Batch {
  readonly waiting: Waiting[];
  checks: number;
}

/**
 * Coalesces the evaluations made in one turn of the event loop: groups submitted for the same target
 * wait until the turn ends (setImmediate, after the I/O callbacks of this loop iteration, so requests
 * that arrived together share the call) and then leave as one script call. A batch that reaches
 * `maxChecks` leaves at once. A failed call fails each of its groups with the same error; a group the
 * script could not decide fails alone.
 */
export class Coalescer {
  readonly #send: SendGroups;
  readonly #maxChecks: number;
  #open = new Map<number, Batch>();
  #scheduled = false;
  readonly #flush = () => {
    this.#scheduled = false;
    const open = this.#open;
    this.#open = new Map();
    for (const batch of open.values()) this.#dispatch(batch.waiting, false);
  };

  constructor(send: SendGroups, maxChecks: number) {
    this.#send = send;
    this.#maxChecks = maxChecks;
  }

  /** Adds a group to the batch of `target`; resolves with the group's results. */
  submit(target: number, group: Group): Promise<CheckResult[]> {
    return new Promise<CheckResult[]>((resolve, reject) => {
      let batch = this.#open.get(target);
      if (batch === undefined) {
        batch = { waiting: [], checks: 0 };
        this.#open.set(target, batch);
      }
      batch.waiting.push({ group, resolve, reject });
      batch.checks += group.checks.length;
      if (batch.checks >= this.#maxChecks) {
        this.#open.delete(target);
        this.#dispatch(batch.waiting, true);
      } else if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(this.#flush);
      }
    });
  }

  #dispatch(waiting: readonly Waiting[], inTurn: boolean): void {
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
      },
      (error: unknown) => {
        for (const w of waiting) w.reject(error);
      },
    );
  }
}

function settle(waiting: Waiting, answer: GroupAnswer): void {
  if (answer instanceof Error) waiting.reject(answer);
  else waiting.resolve(answer);
}
