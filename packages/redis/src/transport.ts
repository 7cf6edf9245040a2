import { createHash } from 'node:crypto';
import type { ClientWatcher } from './clientEvents.js';

/** A Lua script as transports send it: EVALSHA by its SHA1, EVAL of its text when the server lacks it. */
export interface RedisScript {
  /** Short name, for client-side command names (`Evaluate`, `Release`). */
  readonly name: string;
  readonly lua: string;
  /** Hex SHA1 of `lua`, as SCRIPT LOAD and EVALSHA name it. */
  readonly sha: string;
}

/** A script with its SHA1 computed once. */
export function redisScript(name: string, lua: string): RedisScript {
  return { name, lua, sha: createHash('sha1').update(lua).digest('hex') };
}

/**
 * numkeys, the keys, then the arguments: what follows the SHA in EVALSHA. The first key routes the call
 * on a Cluster (every key of one call shares a slot).
 */
export type ScriptArgs = readonly (string | number)[];

/**
 * `ready`: commands go out now. `connecting`: the first connection is being made; commands wait in the
 * client's queue. `down`: the connection was lost or closed; commands would only wait for a reconnect.
 */
export type ConnectionState = 'ready' | 'connecting' | 'down';

/**
 * What RedisStore needs of a Redis client: sending script calls and a few plain commands, and telling
 * its connection events. Everything else (keys, arguments, replies, slots, resilience) is the client-
 * independent codec's and the store's; one transport per client library.
 */
export interface RedisTransport {
  /** True on a Cluster: the store then sends one call per hash slot. */
  readonly isCluster: boolean;
  /**
   * True when the client drops, rather than resends, the commands in flight on a connection that
   * closed, settling them never: the store then fails them itself when it hears the close.
   */
  readonly dropsUnansweredOnClose: boolean;
  /** The connection's state now. */
  state(): ConnectionState;
  /**
   * Runs a script (EVALSHA, then EVAL on NOSCRIPT) and answers its raw reply. `inTurn`: the call is
   * made during the turn of its requests, so a transport may hold the socket's writes until the turn
   * ends (one write for the turn's calls).
   */
  runScript(script: RedisScript, args: ScriptArgs, inTurn: boolean): Promise<unknown>;
  /** TYPE of one key. */
  typeOf(key: string): Promise<unknown>;
  /** DEL of one key. */
  del(key: string): Promise<unknown>;
  /** CONFIG GET of one parameter, as Redis answers it ([name, value]); may reject (managed services). */
  configGet(parameter: string): Promise<unknown>;
  /** Tells `watcher` the client's events until the returned function is called. */
  watch(watcher: ClientWatcher): () => void;
}
