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

const hubs = new WeakMap<EventEmitter, Hub>();

/** Calls `notify` on every live watcher, forgetting those whose store was garbage-collected. */
function dispatch(watchers: Set<WeakRef<ClientWatcher>>, notify: (watcher: ClientWatcher) => void): void {
  for (const ref of watchers) {
    const watcher = ref.deref();
    if (watcher === undefined) watchers.delete(ref);
    else notify(watcher);
  }
}

function attach(client: EventEmitter): Hub {
  const watchers = new Set<WeakRef<ClientWatcher>>();
  const onError = (error: Error) => dispatch(watchers, (w) => w.clientError(error));
  const onClose = () => dispatch(watchers, (w) => w.connectionClosed());
  const onReady = () => dispatch(watchers, (w) => w.clientReady());
  client.on('error', onError);
  client.on('close', onClose);
  client.on('ready', onReady);
  const detach = () => {
    client.off('error', onError);
    client.off('close', onClose);
    client.off('ready', onReady);
  };
  return { watchers, detach };
}

/**
 * Subscribes a watcher to a client's events through ONE listener per event and client, however many stores
 * share the client (a listener per store would trip Node's leak warning at eleven). The watcher is held
 * weakly: a store dropped without close() does not stay alive for it. Returns the unsubscribe, which
 * removes the listeners with the last watcher, giving the client back its own error reporting.
 */
export function watchClient(client: EventEmitter, watcher: ClientWatcher): () => void {
  let hub = hubs.get(client);
  if (hub === undefined) {
    hub = attach(client);
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
