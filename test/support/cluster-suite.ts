/** One Redis Cluster for a test file: started before its tests, stopped (by pid) after them. */
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { type RedisClusterHandle, ready, startCluster } from './redis.js';

/** The running Cluster of a test file: a client to it, one client per master, and the addresses. */
export interface ClusterSuite {
  readonly client: Cluster;
  readonly nodes: readonly Redis[];
  readonly handle: RedisClusterHandle;
}

/** Registers the file's beforeAll/afterAll; read the fields inside tests, once the Cluster is up. */
export function clusterSuite(): ClusterSuite {
  let handle: RedisClusterHandle;
  let client: Cluster;
  let nodes: Redis[];
  beforeAll(async () => {
    handle = await startCluster();
    client = new Cluster(handle.nodes);
    nodes = handle.nodes.map((node) => new Redis(node));
    await Promise.all([client, ...nodes].map(ready));
  });
  afterAll(async () => {
    client.disconnect();
    for (const node of nodes) node.disconnect();
    await handle.stop();
  });
  return {
    get client() {
      return client;
    },
    get nodes() {
      return nodes;
    },
    get handle() {
      return handle;
    },
  };
}
