/** RedisStore on ioredis: the store contract suite and the shared vectors, over one server and a Redis Cluster. */
import { proveRedisClient } from './support/redis-client-proof.js';

proveRedisClient('ioredis');
