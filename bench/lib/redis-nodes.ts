/**
 * What one or more redis-servers report about themselves (a single server, or each primary of a Cluster):
 * CPU time (INFO cpu), script calls and their time (INFO commandstats), memory and keys, read through a plain
 * admin connection per node so that the figures are the servers' own, never the clients'.
 */
import { Redis } from 'ioredis';
import { ready } from '../../test/support/redis.js';

/** One node's counters at a moment. */
export interface NodeSnapshot {
  /** used_cpu_user + used_cpu_sys, µs. */
  readonly cpuUs: number;
  /** EVALSHA and EVAL calls, and their usec (commandstats: a script's own time, its redis.call()s included). */
  readonly scriptCalls: number;
  readonly scriptUsec: number;
  readonly usedMemory: number;
  readonly keys: number;
}

/** Admin connections to some nodes. */
export interface RedisNodes {
  readonly ports: readonly number[];
  snapshot(): Promise<NodeSnapshot[]>;
  /** FLUSHALL SYNC on every node, so that freeing the keys is done before the next figure is read. */
  flush(): Promise<void>;
  close(): void;
}

const number = (text: string, name: string) =>
  Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(text)?.[1] ?? Number.NaN);

async function snapshotOf(admin: Redis): Promise<NodeSnapshot> {
  const [cpu, stats, memory, keyspace] = await Promise.all([
    admin.info('cpu'),
    admin.info('commandstats'),
    admin.info('memory'),
    admin.info('keyspace'),
  ]);
  let scriptCalls = 0;
  let scriptUsec = 0;
  for (const found of stats.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+),usec=(\d+)/gm)) {
    scriptCalls += Number(found[1]);
    scriptUsec += Number(found[2]);
  }
  return {
    cpuUs: Math.round((number(cpu, 'used_cpu_user') + number(cpu, 'used_cpu_sys')) * 1e6),
    scriptCalls,
    scriptUsec,
    usedMemory: number(memory, 'used_memory'),
    keys: Number(/^db0:keys=(\d+)/m.exec(keyspace)?.[1] ?? 0),
  };
}

/** Connects to each node (loopback ports) and waits until every connection is ready. */
export async function redisNodes(ports: readonly number[]): Promise<RedisNodes> {
  const admins = ports.map((port) => new Redis({ host: '127.0.0.1', port }));
  await Promise.all(admins.map(ready));
  return {
    ports,
    snapshot: () => Promise.all(admins.map(snapshotOf)),
    async flush() {
      await Promise.all(admins.map((admin) => admin.flushall('SYNC')));
    },
    close() {
      for (const admin of admins) admin.disconnect();
    },
  };
}

/** Per node, `after` minus `before`. */
export function nodeDeltas(before: readonly NodeSnapshot[], after: readonly NodeSnapshot[]): NodeSnapshot[] {
  return after.map((a, i) => {
    const b = before[i]!;
    return {
      cpuUs: a.cpuUs - b.cpuUs,
      scriptCalls: a.scriptCalls - b.scriptCalls,
      scriptUsec: a.scriptUsec - b.scriptUsec,
      usedMemory: a.usedMemory - b.usedMemory,
      keys: a.keys - b.keys,
    };
  });
}

/** Every node's figures added up. */
export function total(nodes: readonly NodeSnapshot[]): NodeSnapshot {
  return nodes.reduce(
    (sum, n) => ({
      cpuUs: sum.cpuUs + n.cpuUs,
      scriptCalls: sum.scriptCalls + n.scriptCalls,
      scriptUsec: sum.scriptUsec + n.scriptUsec,
      usedMemory: sum.usedMemory + n.usedMemory,
      keys: sum.keys + n.keys,
    }),
    { cpuUs: 0, scriptCalls: 0, scriptUsec: 0, usedMemory: 0, keys: 0 },
  );
}
