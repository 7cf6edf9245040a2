/**
 * Test harness: a TCP proxy on a free loopback port in front of a redis-server, to inject real network
 * faults: reset every connection (RST), swallow traffic so that commands stay in flight, or move to
 * another server (a virtual IP after a failover). New connections go to the current target.
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

/** Starts a proxy to `targetPort` on a free loopback port. */
export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  let target = targetPort;
  let dropping = false;
  const pairs = new Set<Pair>();

  const forward = (from: Socket, to: Socket) => {
    from.on('data', (chunk) => {
      if (!dropping && !to.destroyed) to.write(chunk);
    });
  };

  const server: Server = createServer((client) => {
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
    close() {
      resetAll();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
