/**
 * RedisStore on node-redis (the `redis` package): the same store contract suite and shared vectors as on
 * ioredis, over one server and over a Redis Cluster.
 */
import { nodeRedisClient, nodeRedisCluster } from './support/redis.js';
import { proveRedisClient } from './support/redis-client-proof.js';

proveRedisClient('node-redis', async (server, cluster) => {
  const [single, clustered] = await Promise.all([nodeRedisClient(server), nodeRedisCluster(cluster)]);
  return {
    server: single,
    cluster: clustered,
    close: () => {
      single.destroy();
      clustered.destroy();
    },
  };
});
