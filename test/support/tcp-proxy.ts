/**
 * Test harness: a TCP proxy on a free loopback port in front of a redis-server, to inject real network
 * faults: reset every connection (RST), swallow traffic so that commands stay in flight, move to
 * another server (a virtual IP after a failover), or add latency in both directions (a link across an
 * ocean). New connections go to the current target.
 */
import { createServer, type Server, Socket } from 'node:net';

const HOST = '127.0.0.1';

/** A running proxy; `port` is where clients connect. */
export interface TcpProxy {
  readonly host: string;
  readonly port: number;
  /** Connections open through the proxy (client side). */
  readonly connections: number;
  /** Resets every open connection (TCP RST on both sides), as a middlebox or a network blip does. */
  resetAll(): void;
  /** While on, bytes in both directions are dropped: commands sent meanwhile are never answered. */
  blackhole(on: boolean): void;
  /** New connections go to `port` from now on; open ones keep their server. */
  retarget(port: number): void;
  /** Each chunk is held `ms` before it is passed on, in each direction (a round trip gains 2 × ms); 0: none. */
  delay(ms: number): void;
  close(): Promise<void>;
}

interface Pair {
  readonly client: Socket;
  readonly server: Socket;
}

function reset(socket: Socket): void {
  if (socket.destroyed) return;
  // resetAndDestroy sends RST only on a connected socket; one still connecting is simply destroyed.
  if (socket.connecting) socket.destroy();
  else socket.resetAndDestroy();
}

/** Options of {@link startTcpProxy}. */
export interface TcpProxyOptions {
  /** Latency added in each direction, ms (see {@link TcpProxy.delay}). Default 0. */
  delayMs?: number;
}

/** Starts a proxy to `targetPort` on a free loopback port. */
export async function startTcpProxy(targetPort: number, options: TcpProxyOptions = {}): Promise<TcpProxy> {
  let target = targetPort;
  let dropping = false;
  let delayMs = options.delayMs ?? 0;
  const pairs = new Set<Pair>();

  const forward = (from: Socket, to: Socket) => {
    // Chunks leave in the order they came, each no sooner than `delayMs` after it came; a chunk arriving
    // while the link drops is lost, and so is one still held when the link starts dropping.
    const held: { at: number; chunk: Buffer }[] = [];
    let timer: NodeJS.Timeout | undefined;
    const flush = () => {
      timer = undefined;
      const now = performance.now();
      while (held.length > 0 && held[0]!.at <= now) {
        const { chunk } = held.shift()!;
        if (!dropping && !to.destroyed) to.write(chunk);
      }
      if (held.length > 0) timer = setTimeout(flush, held[0]!.at - now);
    };
    from.on('data', (chunk: Buffer) => {
      if (dropping || to.destroyed) return;
      if (delayMs <= 0 && held.length === 0) {
        to.write(chunk);
        return;
      }
      const last = held[held.length - 1]?.at ?? 0;
      held.push({ at: Math.max(last, performance.now() + delayMs), chunk });
      timer ??= setTimeout(flush, delayMs);
    });
    from.on('close', () => {
      if (timer !== undefined) clearTimeout(timer);
      held.length = 0;
    });
  };

  const server: Server = createServer({ noDelay: true }, (client) => {
    const upstream = new Socket();
    const pair = { client, server: upstream };
    pairs.add(pair);
    const closeBoth = () => {
      pairs.delete(pair);
      reset(client);
      reset(upstream);
    };
    client.on('error', closeBoth);
    upstream.on('error', closeBoth);
    client.on('close', closeBoth);
    upstream.on('close', closeBoth);
    forward(client, upstream);
    forward(upstream, client);
    upstream.setNoDelay(true);
    upstream.connect(target, HOST);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, HOST, () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no port');

  const resetAll = () => {
    for (const pair of [...pairs]) {
      pairs.delete(pair);
      reset(pair.client);
      reset(pair.server);
    }
  };
  return {
    host: HOST,
    port: address.port,
    get connections() {
      return pairs.size;
    },
    resetAll,
    blackhole(on) {
      dropping = on;
    },
    retarget(port) {
      target = port;
    },
    delay(ms) {
      delayMs = ms;
    },
    close() {
      resetAll();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
