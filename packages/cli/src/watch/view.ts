import { type MergedBoard, mergeBoards } from '@sluice/core';
import type { Reveal } from './reveal.js';
import type { FleetSource, NodeCalls } from './source.js';

/** One Cluster master's share of the script calls. */
export interface NodeShare {
  readonly node: string;
  readonly calls: number;
  /** Of all masters' calls, 0 to 1. */
  readonly share: number;
}

/** Shard balance: each master's share, and the busiest share over the mean (1: even). */
export interface ShardView {
  /** `start`: calls since each node started (a first read); `interval`: since the previous read. */
  readonly over: 'start' | 'interval';
  readonly nodes: readonly NodeShare[];
  readonly imbalance: number;
}

/** What `sluice top` prints and the dashboard shows: the merged fleet, shard balance, names of revealed tags. */
export interface FleetView {
  readonly at: number;
  readonly source: string;
  readonly board: MergedBoard;
  /** Boards that could not be read (a gateway of another release). */
  readonly unreadable: number;
  readonly shards: ShardView | undefined;
  /** Tag -> what the app's `reveal` said of it, for the tags shown. */
  readonly revealed: Readonly<Record<string, string>>;
}

/** Keys shown per rule and sketch by default. */
export const SHOWN_KEYS = 10;

/** Shares of the calls each master made since `previous` (or since it started). */
export function shardView(now: readonly NodeCalls[], previous: readonly NodeCalls[] | undefined): ShardView {
  const before = new Map(previous?.map((n) => [n.node, n.calls]));
  const over = previous === undefined ? 'start' : 'interval';
  const calls = now.map((n) => ({ node: n.node, calls: Math.max(0, n.calls - (before.get(n.node) ?? 0)) }));
  const total = calls.reduce((sum, n) => sum + n.calls, 0);
  const nodes = calls.map((n) => ({ ...n, share: total === 0 ? 0 : n.calls / total }));
  const most = Math.max(0, ...nodes.map((n) => n.share));
  return { over, nodes, imbalance: total === 0 ? 1 : most * nodes.length };
}

/**
 * Reads the fleet once: boards merged, shard shares against the last read, the shown tags revealed. Keeps what
 * the next read compares with (a viewer makes one and reads it every interval).
 */
export class FleetReader {
  readonly #source: FleetSource;
  readonly #reveal: Reveal | undefined;
  readonly #keys: number;
  #lastCalls: NodeCalls[] | undefined;

  constructor(source: FleetSource, reveal: Reveal | undefined, keys = SHOWN_KEYS) {
    this.#source = source;
    this.#reveal = reveal;
    this.#keys = keys;
  }

  async read(now = Date.now()): Promise<FleetView> {
    const [{ boards, unreadable }, calls] = await Promise.all([
      this.#source.boards(now),
      this.#source.nodeCalls(),
    ]);
    const board = mergeBoards(boards, { keys: this.#keys });
    const shards = calls === undefined ? undefined : shardView(calls, this.#lastCalls);
    this.#lastCalls = calls;
    const revealed = this.#reveal === undefined ? {} : await this.#reveal.names(board);
    return { at: now, source: this.#source.label, board, unreadable, shards, revealed };
  }
}
