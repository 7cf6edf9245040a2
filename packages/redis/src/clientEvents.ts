import type { EventEmitter } from 'node:events';

/** What a store hears from its client. */
export interface ClientWatcher {
  /** An `error` event (a failed connection attempt, a reset). */
  clientError(error: Error): void;
  /** The connection closed (`close` event): commands in flight on it get no answer on it. */
  connectionClosed(): void;
  /** The client is ready (`ready` event). */
  clientReady(): void;
}

interface Hub {
  readonly watchers: Set<WeakRef<ClientWatcher>>;
  readonly detach: () => void;
}

/** The client's event names behind each watcher call (they differ between client libraries). */
export interface ClientEventNames {
  readonly clientError: readonly string[];
  readonly connectionClosed: readonly string[];
  readonly clientReady: readonly string[];
}

/** ioredis's names, for a Redis or a Cluster. */
export const IOREDIS_EVENTS: ClientEventNames = {
  clientError: ['error'],
  connectionClosed: ['close'],
  clientReady: ['ready'],
};

/** The part of an EventEmitter the hub uses. */
export type Emitter = Pick<EventEmitter, 'on' | 'off'>;

const hubs = new WeakMap<Emitter, Hub>();

/** Calls `notify` on every live watcher, forgetting those whose store was garbage-collected. */
function dispatch(watchers: Set<WeakRef<ClientWatcher>>, notify: (watcher: ClientWatcher) => void): void {
  for (const ref of watchers) {
    const watcher = ref.deref();
    if (watcher === undefined) watchers.delete(ref);
    else notify(watcher);
  }
}

function attach(client: Emitter, names: ClientEventNames): Hub {
  const watchers = new Set<WeakRef<ClientWatcher>>();
  const onError = (error: unknown) => dispatch(watchers, (w) => w.clientError(error as Error));
  const onClose = () => dispatch(watchers, (w) => w.connectionClosed());
  const onReady = () => dispatch(watchers, (w) => w.clientReady());
  const listeners: [string, (arg: unknown) => void][] = [
    ...names.clientError.map((name): [string, (arg: unknown) => void] => [name, onError]),
    ...names.connectionClosed.map((name): [string, (arg: unknown) => void] => [name, onClose]),
    ...names.clientReady.map((name): [string, (arg: unknown) => void] => [name, onReady]),
  ];
  for (const [name, listener] of listeners) client.on(name, listener);
  const detach = () => {
    for (const [name, listener] of listeners) client.off(name, listener);
  };
  return { watchers, detach };
}

/**
 * Subscribes a watcher to a client's events through ONE listener per event and client, however many stores
 * share the client (a listener per store would trip Node's leak warning at eleven). The watcher is held
 * weakly: a store dropped without close() does not stay alive for it. Returns the unsubscribe, which
 * removes the listeners with the last watcher, giving the client back its own error reporting.
 */
export function watchClient(
  client: Emitter,
  watcher: ClientWatcher,
  names: ClientEventNames = IOREDIS_EVENTS,
): () => void {
  let hub = hubs.get(client);
  if (hub === undefined) {
    hub = attach(client, names);
    hubs.set(client, hub);
  }
  const ref = new WeakRef(watcher);
  hub.watchers.add(ref);
  const current = hub;
  return () => {
    current.watchers.delete(ref);
    if (current.watchers.size > 0 || hubs.get(client) !== current) return;
    hubs.delete(client);
    current.detach();
  };
}
