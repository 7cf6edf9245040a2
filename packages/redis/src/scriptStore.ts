import type { Check, CheckResult, Lease, PendingCalls, Store } from '@sluice/core/store';
import { Coalescer } from './coalescer.js';
import { bySlot, giveBackChecks, groupsFor, renewChecks, strandedLeases } from './codec.js';
import type { FirstConnection } from './firstConnection.js';
import { leanCallOf } from './oneAlgorithmScript.js';
import { BAN_SUFFIX } from './policy.js';
import { EVALUATE_SCRIPT } from './script.js';
import {
  type CallSettings,
  evaluateArgv,
  type Group,
  type GroupAnswer,
  keyOf,
  parseReply,
} from './scriptCall.js';
import { slotOfTag } from './slot.js';
import { writing } from './stateFormat.js';
import { type RedisScript, type RedisTransport, redisScript, type ScriptArgs } from './transport.js';

const EVALUATE = redisScript('Evaluate', EVALUATE_SCRIPT);
/** Leases renewed per script call: about 3 ms of Redis time each, measured. */
export const RENEW_BATCH = 256;

/**
 * The Redis part of RedisStore, under core's resilient store: checks in, script calls out through a
 * transport, results back. Each request's checks go in ONE script call per Cluster slot (one in all on
 * a single server), coalesced with the other requests of the turn (and, while a call of their slot is out,
 * held for the next one: see Coalescer) unless `maxChecks` is undefined. Every request is reserved on
 * `calls` before it is queued and every script call is tracked there (its time limit, one timer per call;
 * a held batch has one more, from the end of its turn), so the wrapper adds no tracking of its own. Checks
 * are validated before.
 */
export class ScriptStore implements Store {
  readonly #transport: RedisTransport;
  readonly #settings: CallSettings;
  readonly #calls: PendingCalls;
  /** Collects a turn's evaluations into one call; undefined when coalescing is off. */
  readonly #coalescer: Coalescer | undefined;
  /** Where calls made before the first connection wait for it; none: they go to the client as they are. */
  readonly #firstConnection: FirstConnection | undefined;

  constructor(
    transport: RedisTransport,
    settings: CallSettings,
    calls: PendingCalls,
    maxChecks: number | undefined,
    firstConnection?: FirstConnection,
  ) {
    this.#transport = transport;
    this.#firstConnection = firstConnection;
    this.#settings = settings;
    this.#calls = calls;
    if (maxChecks !== undefined) {
      this.#coalescer = new Coalescer(this.#sendGroups, {
        maxChecks,
        timeoutMs: () => calls.timeoutMs,
        name: 'Redis',
        unsent: (groups) => calls.unreserve(groups),
      });
    }
  }

  evaluate(checks: readonly Check[], now: number): Promise<CheckResult[]> {
    return this.#evaluateInRedis(checks, now);
  }

  /** Leases dropped and units refunded: one script call per Cluster slot, one in all on a single server. */
  release(leases: readonly Lease[], now: number): Promise<void> {
    return this.#giveBack(leases, now);
  }

  /**
   * Held leases extended (a long-lived connection's heartbeat): script calls of at most RENEW_BATCH leases
   * (per Cluster slot), one after the other, so that a round for 10,000 connections never holds Redis for
   * more than a few ms at a time (bench/renewal.ts).
   */
  async renew(leases: readonly Lease[], now: number): Promise<number> {
    const checks = renewChecks(leases);
    let missing = 0;
    for (let i = 0; i < checks.length; i += RENEW_BATCH) {
      const answers = await this.#sendEach(checks.slice(i, i + RENEW_BATCH), now, { renew: true });
      // The renewal fragment answers "not allowed" for a lease the sorted set no longer holds.
      for (const answer of answers) for (const result of answer) if (!result.allowed) missing++;
    }
    return missing;
  }

  /**
   * Lifts a key's ban under a rule: deletes its ban state (violations and escalation level with it), one
   * command with the store's time limit. True when the key had that state.
   */
  async unban(rule: string, tag: string): Promise<boolean> {
    const refused = this.#calls.reserve();
    if (refused !== undefined) throw refused;
    const deleted = await this.#calls.track(
      this.#transport.del(keyOf(this.#settings.prefix, { rule, tag }, BAN_SUFFIX)),
      1,
    );
    return Number(deleted) > 0;
  }

  /** Nothing to close: the client is the user's, its events are RedisStore's. */
  async close(): Promise<void> {}

  #evaluateInRedis(checks: readonly Check[], now: number): Promise<CheckResult[]> {
    if (!this.#transport.isCluster) return this.#submit(0, { checks, now });
    const groups = bySlot(checks);
    if (groups.length === 1) return this.#submit(slotOfTag(checks[0]!.tag), { checks, now });
    return this.#evaluateSlots(checks, now, groups);
  }

  /** A request whose checks span several Cluster slots: one group per slot, all sent at once. */
  async #evaluateSlots(checks: readonly Check[], now: number, groups: number[][]): Promise<CheckResult[]> {
    const answers = await Promise.allSettled(
      groups.map((indexes) =>
        this.#submit(slotOfTag(checks[indexes[0]!]!.tag), {
          checks: indexes.map((i) => checks[i]!),
          now,
        }),
      ),
    );
    const results: CheckResult[] = new Array(checks.length);
    let failure: unknown;
    groups.forEach((indexes, g) => {
      const answer = answers[g]!;
      if (answer.status === 'rejected') {
        failure ??= answer.reason;
        return;
      }
      indexes.forEach((checkIndex, j) => {
        results[checkIndex] = answer.value[j]!;
      });
    });
    this.#returnStrandedLeases(checks, groups, results, failure !== undefined, now);
    if (failure !== undefined) throw failure;
    return results;
  }

  /**
   * Queues one group for its target (slot) and counts it as pending until Redis answers. Without
   * coalescing it leaves at once, alone.
   */
  #submit(target: number, group: Group): Promise<CheckResult[]> {
    const refused = this.#calls.reserve();
    if (refused !== undefined) return Promise.reject(refused);
    if (this.#coalescer !== undefined) return this.#coalescer.submit(target, group);
    return this.#sendOne(group);
  }

  async #sendOne(group: Group): Promise<CheckResult[]> {
    const [answer] = await this.#sendGroups([group], true);
    if (answer instanceof Error) throw answer;
    return answer!;
  }

  /**
   * One script call for groups already counted as pending; they stop counting when Redis answers. A call of
   * one algorithm without policies takes that algorithm's lean script (leanCallOf), the rest the general one.
   */
  readonly #sendGroups = async (groups: readonly Group[], inTurn: boolean): Promise<GroupAnswer[]> => {
    let script = EVALUATE;
    let argv: (string | number)[];
    try {
      const lean = leanCallOf(groups, this.#settings);
      if (lean === undefined) argv = evaluateArgv(groups, this.#settings);
      else ({ script, argv } = lean);
    } catch (error) {
      this.#calls.unreserve(groups.length);
      throw error;
    }
    const reply = await this.#run(script, argv, groups.length, inTurn);
    return parseReply(reply, groups);
  };

  /** Gives back the leases a request refused in another slot group would hold until they expire. */
  #returnStrandedLeases(
    checks: readonly Check[],
    groups: number[][],
    results: readonly (CheckResult | undefined)[],
    failed: boolean,
    now: number,
  ): void {
    const stranded = strandedLeases(checks, groups, results, failed);
    if (stranded.length > 0) this.#giveBack(stranded, now).catch(() => {});
  }

  /**
   * What requests give back (see giveBackChecks), as checks of the evaluation script that always commit: one
   * call per slot group. A key of the wrong type fails its group with a KeyStateError naming its rules, and is
   * removed by the script, as in evaluation.
   */
  async #giveBack(leases: readonly Lease[], now: number): Promise<void> {
    if (leases.length === 0) return;
    await this.#sendEach(giveBackChecks(leases), now, { refund: true });
  }

  /** Checks that always commit (give-backs, renewals), one script call per slot group. */
  async #sendEach(
    checks: Check[],
    now: number,
    kind: { refund?: true; renew?: true },
  ): Promise<CheckResult[][]> {
    if (checks.length === 0) return [];
    const groups = groupsFor(checks, this.#transport.isCluster);
    return Promise.all(
      groups.map((indexes) => {
        const refused = this.#calls.reserve();
        if (refused !== undefined) return Promise.reject(refused);
        return this.#sendOne({ checks: indexes.map((i) => checks[i]!), now, ...kind });
      }),
    );
  }

  /**
   * Sends one script call with the time limit, for `counted` pending requests that stop counting when
   * Redis answers. `inTurn`: the call is made during the turn of its requests (see RedisTransport). Before
   * the client's first connection is up, the call waits for it (within the time limit, see FirstConnection)
   * and is left out of the stall watchdog: it waits for the connection, not for Redis to answer.
   */
  #run(chosen: RedisScript, args: ScriptArgs, counted: number, inTurn: boolean): Promise<unknown> {
    const script = writing(chosen, this.#settings.stateFormat ?? 'text');
    const first = this.#firstConnection;
    if (first === undefined || this.#transport.state() !== 'connecting') {
      return this.#calls.track(this.#transport.runScript(script, args, inTurn), counted);
    }
    const sent = first.wait(this.#calls.timeoutMs).then(() => this.#transport.runScript(script, args, false));
    return this.#calls.track(sent, counted, false);
  }
}
