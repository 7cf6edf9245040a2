/**
 * RedisStore on node-redis (the `redis` package): the same store contract suite and shared vectors as on
 * ioredis, over one server and over a Redis Cluster.
 */
import { proveRedisClient } from './support/redis-client-proof.js';

proveRedisClient('node-redis');
