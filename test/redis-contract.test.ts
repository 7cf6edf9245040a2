/** RedisStore on ioredis: the store contract suite and the shared vectors, over one server and a Redis Cluster. */
import { Cluster, Redis } from 'ioredis';
import { ready } from './support/redis.js';
import { proveRedisClient } from './support/redis-client-proof.js';

proveRedisClient('ioredis', async (server, cluster) => {
  const pair = {
    server: new Redis({ host: server.host, port: server.port }),
    cluster: new Cluster(cluster.nodes),
  };
  await Promise.all([ready(pair.server), ready(pair.cluster)]);
  return {
    ...pair,
    close: () => {
      pair.server.disconnect();
      pair.cluster.disconnect();
    },
  };
});
