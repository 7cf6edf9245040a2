import { type ClientEventNames, type ClientWatcher, type Emitter, watchClient } from './clientEvents.js';
import type { ConnectionState, RedisScript, RedisTransport, ScriptArgs } from './transport.js';

/**
 * The part of a node-redis (`redis` package) client RedisStore uses: `createClient()`, connected by
 * you (`await client.connect()`). Structural, so that this package's types need no `redis` installed.
 */
export interface NodeRedisClient extends Emitter {
  readonly isOpen: boolean;
  readonly isReady: boolean;
  sendCommand(args: string[]): Promise<unknown>;
}

/** The part of a node-redis Cluster (`createCluster()`, connected by you) RedisStore uses. */
export interface NodeRedisCluster extends Emitter {
  readonly isOpen: boolean;
  readonly isReady: boolean;
  sendCommand(
    firstKey: string | undefined,
    isReadonly: boolean | undefined,
    args: string[],
  ): Promise<unknown>;
  /** Present on a Cluster only: how the two are told apart. */
  nodeClient(...args: never[]): unknown;
}

/**
 * The part of a node-redis Sentinel client (`createSentinel()`, connected by you) RedisStore uses: its
 * sendCommand takes whether the command only reads first (false: the primary answers), then the arguments.
 */
export interface NodeRedisSentinel extends Emitter {
  readonly isOpen: boolean;
  readonly isReady: boolean;
  sendCommand(isReadonly: boolean | undefined, args: string[]): Promise<unknown>;
  /** Present on a Sentinel client only: how it is told apart. */
  getMasterNode(): unknown;
}

type AnyNodeRedis = NodeRedisClient | NodeRedisCluster | NodeRedisSentinel;

/** Whether a value looks like a node-redis client, Cluster or Sentinel client. */
export function isNodeRedis(client: unknown): client is AnyNodeRedis {
  const candidate = client as { sendCommand?: unknown; isReady?: unknown } | null;
  return typeof candidate?.sendCommand === 'function' && typeof candidate.isReady === 'boolean';
}

function isCluster(client: AnyNodeRedis): client is NodeRedisCluster {
  return typeof (client as { nodeClient?: unknown }).nodeClient === 'function';
}

function isSentinel(client: AnyNodeRedis): client is NodeRedisSentinel {
  return typeof (client as { getMasterNode?: unknown }).getMasterNode === 'function';
}

/** How each kind of client takes a command: three signatures for one sendCommand. */
function senderOf(client: AnyNodeRedis): (firstKey: string | undefined, args: string[]) => Promise<unknown> {
  if (isCluster(client)) return (firstKey, args) => client.sendCommand(firstKey, false, args);
  // Not read-only: the primary answers (a script writes).
  if (isSentinel(client)) return (_firstKey, args) => client.sendCommand(false, args);
  return (_firstKey, args) => (client as NodeRedisClient).sendCommand(args);
}

/** A client's and a Cluster's events (a Cluster reports its nodes' errors as `node-error`). */
const CLIENT_EVENTS: ClientEventNames = {
  clientError: ['error'],
  connectionClosed: ['end'],
  clientReady: ['ready'],
};
const CLUSTER_EVENTS: ClientEventNames = {
  clientError: ['error', 'node-error'],
  connectionClosed: ['disconnect'],
  clientReady: ['connect'],
};

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/**
 * The node-redis transport: EVALSHA through `sendCommand`, EVAL when the server answers NOSCRIPT (a
 * restarted or flushed Redis), which also loads the script for the next calls. node-redis writes the
 * commands of a turn together and, on a Cluster, routes each call by its first key. It rejects the
 * commands in flight on a connection that failed itself, so none is left unsettled.
 */
export class NodeRedisTransport implements RedisTransport {
  readonly #client: AnyNodeRedis;
  readonly #send: (firstKey: string | undefined, args: string[]) => Promise<unknown>;
  readonly isCluster: boolean;
  readonly dropsUnansweredOnClose = false;
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

  constructor(client: AnyNodeRedis) {
    this.#client = client;
    this.isCluster = isCluster(client);
    this.#send = senderOf(client);
    this.#wasReady = client.isReady;
  }

  state(): ConnectionState {
    if (this.#client.isReady) return 'ready';
    if (!this.#client.isOpen) return 'down';
    // Open but not ready: connecting for the first time, or reconnecting after a loss.
    return this.#wasReady ? 'down' : 'connecting';
  }

  async runScript(script: RedisScript, args: ScriptArgs, _inTurn: boolean): Promise<unknown> {
    const rest = args.map(String);
    // With no key (never sent by the store) the call goes to any node.
    const firstKey = Number(args[0]) > 0 ? rest[1] : undefined;
    try {
      return await this.#send(firstKey, ['EVALSHA', script.sha, ...rest]);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      return this.#send(firstKey, ['EVAL', script.lua, ...rest]);
    }
  }

  typeOf(key: string): Promise<unknown> {
    return this.#send(key, ['TYPE', key]);
  }

  del(key: string): Promise<unknown> {
    return this.#send(key, ['DEL', key]);
  }

  async configGet(parameter: string): Promise<unknown> {
    const reply = await this.#send(undefined, ['CONFIG', 'GET', parameter]);
    // node-redis answers CONFIG GET as a map; the store reads Redis's [name, value].
    if (reply instanceof Map) return [parameter, reply.get(parameter)];
    if (reply !== null && typeof reply === 'object' && !Array.isArray(reply)) {
      return [parameter, (reply as Record<string, unknown>)[parameter]];
    }
    return reply;
  }

  watch(watcher: ClientWatcher): () => void {
    this.#watcher = watcher;
    return watchClient(this.#client, this.#relay, this.isCluster ? CLUSTER_EVENTS : CLIENT_EVENTS);
  }
}
