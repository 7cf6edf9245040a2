export type { RawData } from 'ws';
export { UpgradeFacts } from './facts.js';
export { refuseHandshake } from './handshake.js';
export type { HonoUpgradeWebSocket } from './hono.js';
export {
  type Admission,
  type MessageOptions,
  type WebSocketLimit,
  type WebSocketLimitOptions,
  websocketLimit,
} from './limit.js';
export {
  CLOSE_MAX_DURATION,
  CLOSE_RATE_LIMITED,
  type MessageFacts,
  type Refusal,
  type RefusedFrame,
} from './messages.js';
export type { SocketIoServer } from './servers.js';
export {
  type HandshakeRefusal,
  HandshakeRefusedError,
  RATE_LIMITED_EVENT,
  type RefusedEvent,
  type SocketIoLimit,
  type SocketIoSocket,
} from './socketio.js';
export { type Subscribed, type SubscriptionLimit, subscriptionLimit } from './subscriptions.js';
export {
  type ByteThrottle,
  type ByteThrottleOptions,
  byteThrottle,
  ThrottlePieceTooLargeError,
} from './throttle.js';
