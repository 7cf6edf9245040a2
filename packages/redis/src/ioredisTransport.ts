import type { Cluster, Redis } from 'ioredis';
import { type ClientWatcher, watchClient } from './clientEvents.js';
import type { ConnectionState, RedisScript, RedisTransport, ScriptArgs } from './transport.js';

type ScriptCommand = (...args: (string | number)[]) => Promise<unknown>;

/** ioredis states in which a command would only wait in its offline queue for a reconnect. */
const DOWN = new Set(['reconnecting', 'close', 'end', 'disconnecting']);

/** Whether a value is an ioredis Redis or Cluster (it defines commands). */
export function isIoredis(client: unknown): client is Redis | Cluster {
  return typeof (client as { defineCommand?: unknown } | null)?.defineCommand === 'function';
}

/** The client-side command of a script: named by its SHA, so two script versions never share a name. */
function commandName(script: RedisScript): string {
  return `sluice${script.name}_${script.sha.slice(0, 12)}`;
}

/**
 * The ioredis transport. Scripts go through `defineCommand`, which sends EVALSHA and resends EVAL on
 * NOSCRIPT by itself; ioredis routes a Cluster call by its first key and pipelines the calls made in a
 * turn. On one server, the socket is corked for the rest of the turn, so concurrent calls leave in
 * one write.
 */
export class IoredisTransport implements RedisTransport {
  readonly #client: Redis | Cluster;
  readonly #defined = new Set<string>();
  readonly isCluster: boolean;
  readonly dropsUnansweredOnClose: boolean;
  /** Whether the client has been ready: after that, not ready means the connection was lost. */
  #wasReady: boolean;
  /** Whom the relay tells the client's events (the store). */
  #watcher: ClientWatcher | undefined;
  /** Our listener, held here (watchClient holds it weakly): notes readiness, then tells the store. */
  readonly #relay: ClientWatcher = {
    clientError: (error) => this.#watcher?.clientError(error),
    connectionClosed: () => this.#watcher?.connectionClosed(),
    clientReady: () => {
      this.#wasReady = true;
      this.#watcher?.clientReady();
    },
  };
  /** The socket corked for this turn of the event loop, if any. */
  #corked: { uncork(): void } | undefined;
  readonly #uncork = () => {
    const stream = this.#corked;
    this.#corked = undefined;
    stream?.uncork();
  };

  constructor(client: Redis | Cluster) {
    this.#client = client;
    this.isCluster = client.isCluster;
    this.#wasReady = client.status === 'ready';
    this.dropsUnansweredOnClose =
      !client.isCluster && (client as Redis).options.autoResendUnfulfilledCommands === false;
  }

  state(): ConnectionState {
    const status = this.#client.status;
    if (status === 'ready') {
      this.#wasReady = true;
      return 'ready';
    }
    // Before its first connection (a server that starts a little later: refused, reconnecting), calls wait
    // for it; once it has been ready, a lost connection fails them at once.
    if (status === 'end' || (this.#wasReady && DOWN.has(status))) return 'down';
    return 'connecting';
  }

  runScript(script: RedisScript, args: ScriptArgs, inTurn: boolean): Promise<unknown> {
    const name = commandName(script);
    if (!this.#defined.has(name)) {
      this.#client.defineCommand(name, { lua: script.lua });
      this.#defined.add(name);
    }
    const send = (this.#client as unknown as Record<string, ScriptCommand>)[name]!;
    if (inTurn) this.#corkForThisTurn();
    return send.apply(this.#client, args as (string | number)[]);
  }

  typeOf(key: string): Promise<unknown> {
    return this.#client.type(key);
  }

  del(key: string): Promise<unknown> {
    return this.#client.del(key);
  }

  configGet(parameter: string): Promise<unknown> {
    return this.#client.config('GET', parameter);
  }

  watch(watcher: ClientWatcher): () => void {
    this.#watcher = watcher;
    return watchClient(this.#client, this.#relay);
  }

  /** Holds this turn's writes in the socket until the turn ends: one write for every call made meanwhile. */
  #corkForThisTurn(): void {
    if (this.#corked !== undefined || this.#client.isCluster) return;
    // Only a live connection: commands sent while (re)connecting wait in ioredis's queues, not the socket.
    if (this.#client.status !== 'ready') return;
    const stream = (this.#client as Redis).stream as { cork?(): void; uncork(): void } | undefined;
    if (typeof stream?.cork !== 'function') return;
    stream.cork();
    this.#corked = stream;
    setImmediate(this.#uncork);
  }
}
