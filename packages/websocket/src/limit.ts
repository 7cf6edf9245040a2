import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { ConfigError, checkOptionNames, type RuleSpec } from '@sluice/core';
import {
  createHttpLimiter,
  type HttpLimiter,
  normalizeIp,
  type RateLimitOptions,
  type Verdict,
} from '@sluice/core/http';
import type { RawData, VerifyClientCallbackAsync, WebSocket, WebSocketServer } from 'ws';
import { UpgradeFacts } from './facts.js';
import { failHandshake, refuseHandshake, rejectHandshake } from './handshake.js';
import { type HonoUpgradeWebSocket, limitHonoMessages } from './hono.js';
import {
  CLOSE_MAX_DURATION,
  decideMessage,
  type MessageFacts,
  type MessageGate,
  type Refusal,
  refuseMessage,
} from './messages.js';
import { closeFor, isWsServer, isWsSocket, type SocketIoServer } from './servers.js';
import {
  gateOf,
  type RefusedEvent,
  refusedEvent,
  type SocketIoLimit,
  type SocketIoSocket,
  socketIoLimit,
} from './socketio.js';
import { type SubscriptionLimit, subscriptionLimit } from './subscriptions.js';

/** What ws writes on a refused handshake (verifyClient). */
type HandshakeAnswer = ReturnType<typeof rejectHandshake>;

/** Message limits: the rules every message is checked against, and what a message counts as. */
export interface MessageOptions {
  /** Rules (the rules file's shape) for messages only; the upgrade is checked against the limiter's `rules`. */
  rules: RuleSpec | readonly RuleSpec[];
  /** A message's descriptors and cost; default: no descriptors, cost 1. */
  describe?: (data: RawData, isBinary: boolean) => MessageFacts;
  /** How a message over a limit is refused, for all rules or by rule name (default `error`: an error frame). */
  refuse?: Refusal | Readonly<Record<string, Refusal>>;
  /** socket.io: an event's descriptors and cost; default: descriptors `{ event }`, cost 1. */
  describeEvent?: (event: string, args: readonly unknown[]) => MessageFacts;
}

/** Options of {@link websocketLimit}: every HTTP adapter option for the upgrade, and the socket's own. */
export interface WebSocketLimitOptions extends RateLimitOptions<IncomingMessage> {
  messages?: MessageOptions;
  /** Closes a connection this long after it opened (close code 4030). Default: no maximum. */
  maxDurationMs?: number;
  /** Channels (rooms, topics) a connection may hold at once, through `limits.subscriptions`. Default: no limit. */
  maxSubscriptions?: number;
}

/** An upgrade the limiter admitted: attach the socket once it is open. */
export interface Admission {
  /** Holds the upgrade's leases for the socket's life, limits its messages, closes it at `maxDurationMs`. */
  attach(ws: WebSocket): void;
  /** Gives the upgrade's leases back when no socket will be attached (the handshake failed). */
  abandon(): void;
}

/** The limits of one WebSocket server (`ws`, or any server built on it). */
export interface WebSocketLimit {
  readonly http: HttpLimiter<IncomingMessage>;
  /**
   * Decides an upgrade request like any request: over a limit, answers the socket with an HTTP 429 (Retry-After,
   * RateLimit fields) and resolves undefined, no socket opened. Never rejects.
   */
  upgrade(req: IncomingMessage, socket: Duplex): Promise<Admission | undefined>;
  /** `server.on('upgrade', limits.handleUpgrade(wss))`: decides, then completes the handshake and attaches. */
  handleUpgrade(wss: WebSocketServer): (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /**
   * For a `ws` server you do not drive yourself (`@fastify/websocket`'s `options`, `new WebSocketServer({ server })`):
   * decides the upgrade; over a limit ws answers the handshake with the 429, its headers and JSON body. Then call
   * {@link WebSocketLimit.attach} with the open socket and its request.
   */
  readonly verifyClient: VerifyClientCallbackAsync;
  /** Attaches a socket whose upgrade `verifyClient` or `guardUpgrades` admitted (a no-op for any other). */
  attach(ws: WebSocket, req: IncomingMessage): void;
  /**
   * For a server whose upgrade listener is not yours (Hono's `upgradeWebSocket` on `@hono/node-server` or
   * `@hono/node-ws`): decides every upgrade before the listeners already on `server` run, over a limit the 429
   * and no socket; the sockets `wss` opens are attached. Call it after the listener is added (`serve`,
   * `injectWebSocket`); throws ConfigError when there is none yet.
   */
  guardUpgrades(server: Server, wss?: WebSocketServer): void;
  /** Hono's `upgradeWebSocket`, its `onMessage` seeing only admitted messages (same type as given). */
  hono<U extends HonoUpgradeWebSocket>(upgradeWebSocket: U): U;
  /**
   * For a server a framework created (a NestJS gateway's, in `afterInit`): a `ws` server gets the upgrade
   * decided by `verifyClient` and its sockets attached; a socket.io server or namespace the handshake middleware.
   */
  limitServer(server: WebSocketServer | SocketIoServer): void;
  /**
   * For a framework that dispatches messages itself (a NestJS gateway's guard): decides one message of a
   * connection these limits admitted (a `ws` socket or a socket.io socket). Undefined: handle it (also when the
   * limiter failed: reported). Else the refusal to send; a rule refusing by `close` has closed the connection.
   */
  checkMessage(
    connection: WebSocket | SocketIoSocket,
    event: string,
    facts: MessageFacts,
  ): Promise<RefusedEvent | undefined>;
  /** socket.io: `io.use(limits.socketIo.handshake)` and, per socket, `socket.use(limits.socketIo.events(socket))`. */
  readonly socketIo: SocketIoLimit;
  /** Per-connection subscriptions, when `maxSubscriptions` is set: `subscribe(ws, channel)` before joining one. */
  readonly subscriptions: SubscriptionLimit | undefined;
  /**
   * A message handler that only sees admitted messages: `ws.on('message', limits.onMessage(ws, handler))`.
   * Without `messages` in the options every message is admitted.
   */
  onMessage(
    ws: WebSocket,
    handler: (data: RawData, isBinary: boolean) => void,
  ): (data: RawData, isBinary: boolean) => void;
  close(): Promise<void>;
}

const MESSAGE_OPTIONS: readonly (keyof MessageOptions)[] = ['rules', 'describe', 'refuse', 'describeEvent'];

/** What a socket attached by these limits carries: its message gate. */
const GATES = new WeakMap<WebSocket, MessageGate>();
/** Upgrades `verifyClient` admitted, waiting for their socket. */
const PENDING = new WeakMap<IncomingMessage, Admission>();

/** Builds the limits of a WebSocket server once, at start-up; throws ConfigError/RulesError when wrong. */
export function websocketLimit(options: WebSocketLimitOptions = {}): WebSocketLimit {
  const { messages, maxDurationMs, maxSubscriptions, ...httpOptions } = options;
  if (messages !== undefined) checkOptionNames('websocketLimit messages', messages, MESSAGE_OPTIONS);
  if (maxDurationMs !== undefined && !(Number.isFinite(maxDurationMs) && maxDurationMs > 0))
    throw new ConfigError(`maxDurationMs must be a positive number of ms, got ${String(maxDurationMs)}`);
  const http = createHttpLimiter<IncomingMessage, RateLimitOptions<IncomingMessage>>(httpOptions);
  const messageRules =
    messages === undefined ? undefined : http.compileRouteRules(messages.rules, 'websocket messages');
  const report = (error: unknown) => http.report(error, 'release');

  function gateFor(
    req: IncomingMessage,
    facts: { readonly ip: string | undefined },
  ): MessageGate | undefined {
    if (messages === undefined || messageRules === undefined) return undefined;
    const ip = facts.ip === undefined ? undefined : normalizeIp(facts.ip);
    return {
      limiter: http.limiter,
      rules: messageRules,
      base: { ip, connection: randomUUID(), path: (req.url ?? '/').split('?')[0] },
      refusalOf: refusalOf(messages.refuse),
      report,
      tail: Promise.resolve(),
    };
  }

  function admission(
    verdict: Extract<Verdict, { action: 'allow' }>,
    gate: MessageGate | undefined,
  ): Admission {
    return {
      attach(ws) {
        if (gate !== undefined) GATES.set(ws, gate);
        const timer =
          maxDurationMs === undefined
            ? undefined
            : setTimeout(() => ws.close(CLOSE_MAX_DURATION, 'maximum connection duration'), maxDurationMs);
        timer?.unref();
        ws.once('close', () => {
          if (timer !== undefined) clearTimeout(timer);
          // The socket's end is its response's: leases released (no status: counted as served).
          verdict.onResponse?.(101);
        });
      },
      abandon: () => void verdict.cancel(),
    };
  }

  async function upgrade(req: IncomingMessage, socket: Duplex): Promise<Admission | undefined> {
    const facts = new UpgradeFacts(req);
    try {
      const verdict = await http.check(req, facts);
      if (verdict.action === 'deny') {
        refuseHandshake(socket, verdict.denied);
        return undefined;
      }
      if (verdict.action === 'skip') return { attach: () => {}, abandon: () => {} };
      if (socket.destroyed) {
        await verdict.cancel();
        return undefined;
      }
      return admission(verdict, gateFor(req, facts));
    } catch (error) {
      report(error);
      failHandshake(socket);
      return undefined;
    }
  }

  /** Hands an admitted message to `handler`, or refuses it; in arrival order (decided at once). */
  function deliver(ws: WebSocket, data: RawData, isBinary: boolean, handler: () => void): void {
    const gate = GATES.get(ws);
    if (gate === undefined) {
      handler();
      return;
    }
    const decided = decideMessage(gate, messages?.describe?.(data, isBinary) ?? {});
    gate.tail = gate.tail
      .then(() => decided)
      .then((decision) => {
        if (decision === undefined || decision.allowed) handler();
        else refuseMessage(gate, ws, decision);
      })
      .catch(report);
  }

  /** Keeps an admitted upgrade for `attach`; a handshake that never completes gives its leases back. */
  function pend(req: IncomingMessage, admitted: Admission): void {
    PENDING.set(req, admitted);
    req.socket.once('close', () => {
      if (PENDING.delete(req)) admitted.abandon();
    });
  }

  const attach = (ws: WebSocket, req: IncomingMessage): void => {
    const admitted = PENDING.get(req);
    PENDING.delete(req);
    admitted?.attach(ws);
  };

  const verifyClient: VerifyClientCallbackAsync = (info, done) => {
    void verify(info.req).then((answer) => {
      if (answer === undefined) return done(true);
      done(false, answer.status, answer.body, answer.headers);
    });
  };

  const socketIo = socketIoLimit({
    check: (req, ip) => http.check(req, new UpgradeFacts(req, ip)),
    gateFor,
    describeEvent: messages?.describeEvent,
    report,
    maxDurationMs,
  });

  return {
    http,
    upgrade,
    handleUpgrade: (wss) => (req, socket, head) => {
      void upgrade(req, socket).then((admitted) => {
        if (admitted === undefined) return;
        let attached = false;
        // ws destroys a socket whose handshake it refuses (bad headers): its leases go back then.
        socket.once('close', () => {
          if (!attached) admitted.abandon();
        });
        wss.handleUpgrade(req, socket, head, (ws) => {
          attached = true;
          admitted.attach(ws);
          wss.emit('connection', ws, req);
        });
      });
    },
    onMessage: (ws, handler) => (data, isBinary) =>
      deliver(ws, data, isBinary, () => handler(data, isBinary)),
    verifyClient,
    attach,
    guardUpgrades(server, wss) {
      const theirs = server.listeners('upgrade') as ((...args: unknown[]) => void)[];
      if (theirs.length === 0)
        throw new ConfigError(
          'guardUpgrades: the server has no upgrade listener yet; call it after serve() / injectWebSocket(server)',
        );
      server.removeAllListeners('upgrade');
      server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
        void upgrade(req, socket).then((admitted) => {
          if (admitted === undefined) return;
          pend(req, admitted);
          for (const listener of theirs) listener.call(server, req, socket, head);
        });
      });
      wss?.on('connection', attach);
    },
    hono: (upgradeWebSocket) => limitHonoMessages(upgradeWebSocket, deliver),
    limitServer(server) {
      if (!isWsServer(server)) {
        server.use(socketIo.handshake);
        return;
      }
      if (server.options.verifyClient != null)
        throw new ConfigError('limitServer: this ws server has a verifyClient of its own already');
      // ws reads its verifyClient option on every upgrade: set on a server a framework built, it decides them.
      server.options.verifyClient = verifyClient;
      server.on('connection', attach);
    },
    async checkMessage(connection, event, facts) {
      const gate = isWsSocket(connection) ? GATES.get(connection) : gateOf(connection);
      if (gate === undefined) return undefined;
      const decided = decideMessage(gate, facts);
      // In arrival order, as the connection's other messages.
      const turn = gate.tail.then(() => decided);
      gate.tail = turn.then(() => undefined, report);
      const decision = await turn;
      if (decision === undefined || decision.allowed) return undefined;
      if (gate.refusalOf(decision.rule) === 'close') closeFor(connection, decision);
      return refusedEvent(event, decision);
    },
    socketIo,
    subscriptions: maxSubscriptions === undefined ? undefined : subscriptionLimit(maxSubscriptions),
    close: () => http.limiter.close(),
  };

  /** verifyClient's decision: undefined to accept (the admission kept for `attach`), else the refusal to send. */
  async function verify(req: IncomingMessage): Promise<HandshakeAnswer | undefined> {
    const facts = new UpgradeFacts(req);
    try {
      const verdict = await http.check(req, facts);
      if (verdict.action === 'deny') return rejectHandshake(verdict.denied);
      if (verdict.action === 'skip') return undefined;
      pend(req, admission(verdict, gateFor(req, facts)));
      return undefined;
    } catch (error) {
      report(error);
      return { status: 503, body: '', headers: {} };
    }
  }
}

/** The refusal of a denying rule: the option's, by rule name or for all; `error` by default. */
function refusalOf(refuse: MessageOptions['refuse']): (rule: string | undefined) => Refusal {
  if (refuse === undefined || typeof refuse === 'string') return () => refuse ?? 'error';
  return (rule) => (rule === undefined ? undefined : refuse[rule]) ?? 'error';
}
