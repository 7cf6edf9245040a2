import type { RawData, WebSocket } from 'ws';

/**
 * Hono's `upgradeWebSocket` (`@hono/node-server` 2, `@hono/node-ws`), as far as the limits need it: called with
 * a function making a context's events (and options), or with a context and the events (and options).
 */
export type HonoUpgradeWebSocket = (...args: never[]) => unknown;

/** A Hono WebSocket context: `raw` is the `ws` socket on Node. */
interface HonoSocket {
  readonly raw?: unknown;
}

/** Hono's WebSocket events, as far as the limits read them. */
interface HonoEvents {
  onMessage?(evt: { readonly data: unknown }, ws: HonoSocket): void;
}

type Deliver = (ws: WebSocket, data: RawData, isBinary: boolean, handler: () => void) => void;

/** `upgradeWebSocket` with every context's `onMessage` seeing only the messages the limits admit. */
export function limitHonoMessages<U extends HonoUpgradeWebSocket>(upgradeWebSocket: U, deliver: Deliver): U {
  const upgrade = upgradeWebSocket as unknown as (...args: unknown[]) => unknown;
  const limited = (first: unknown, ...rest: unknown[]): unknown => {
    if (typeof first !== 'function')
      return upgrade(first, limitEvents(rest[0] as HonoEvents, deliver), ...rest.slice(1));
    const createEvents = first as (c: unknown) => HonoEvents | Promise<HonoEvents>;
    return upgrade(async (c: unknown) => limitEvents(await createEvents(c), deliver), ...rest);
  };
  return limited as unknown as U;
}

function limitEvents(events: HonoEvents, deliver: Deliver): HonoEvents {
  const { onMessage } = events;
  if (onMessage === undefined) return events;
  return {
    ...events,
    onMessage(evt, ws) {
      const handle = () => onMessage.call(events, evt, ws);
      const raw = ws.raw as WebSocket | undefined;
      if (raw === undefined || typeof raw.on !== 'function') return handle();
      // Hono hands text as a string and binary as an ArrayBuffer: `describe` sees ws's own forms.
      const text = typeof evt.data === 'string';
      deliver(raw, text ? Buffer.from(evt.data as string) : (evt.data as ArrayBuffer), !text, handle);
    },
  };
}
