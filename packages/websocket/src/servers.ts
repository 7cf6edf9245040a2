import type { Decision } from '@sluice/core';
import type { WebSocket, WebSocketServer } from 'ws';
import { closeRateLimited } from './messages.js';
import type { SocketIoSocket } from './socketio.js';

/** What `limitServer` needs of a socket.io server or namespace (socket.io 4's `Server` and `Namespace` fit). */
export interface SocketIoServer {
  use(middleware: (socket: SocketIoSocket, next: (error?: Error) => void) => void): unknown;
}

/** A `ws` server (it upgrades), not a socket.io one. */
export const isWsServer = (server: WebSocketServer | SocketIoServer): server is WebSocketServer =>
  typeof (server as Partial<WebSocketServer>).handleUpgrade === 'function';

/** A `ws` socket (it has a WebSocket's readyState), not a socket.io one. */
export const isWsSocket = (connection: WebSocket | SocketIoSocket): connection is WebSocket =>
  typeof (connection as Partial<WebSocket>).readyState === 'number' &&
  typeof (connection as Partial<WebSocket>).send === 'function';

/** Ends a connection refused by a rule whose refusal is `close`: ws code 4029, a socket.io disconnect. */
export function closeFor(connection: WebSocket | SocketIoSocket, decision: Decision): void {
  if (isWsSocket(connection)) closeRateLimited(connection, decision);
  else connection.disconnect(true);
}
