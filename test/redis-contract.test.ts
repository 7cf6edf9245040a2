/**
 * RedisStore on ioredis, both majors the peer range takes (5 and 6, RESP3 by default): the store contract suite
 * and the shared vectors, over one server and a Redis Cluster.
 */
import { proveRedisClient } from './support/redis-client-proof.js';

proveRedisClient('ioredis');
proveRedisClient('ioredis 6');
