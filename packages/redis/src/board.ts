import { type Board, StoreError, withTimeout } from '@sluice/core/store';
import { compact } from './script.js';
import { type RedisScript, type RedisTransport, redisScript } from './transport.js';

/**
 * The board's two keys, under one hash tag of their own, so that on a Cluster both live on one node and every
 * call names one slot: a hash of each gateway's latest board, and a sorted set of when each expires. Boards
 * hold rule names, counts and hashed tags, never a key in clear.
 */
export function boardKeys(prefix = 'sluice'): readonly [boards: string, until: string] {
  return [`${prefix}:{board}:boards`, `${prefix}:{board}:until`];
}

const PUBLISH_SCRIPT: RedisScript = redisScript(
  'BoardPublish',
  compact(`
local boards = KEYS[1]         -- hash: gateway -> its latest board (JSON)
local expiry = KEYS[2]          -- sorted set: gateway -> when its board expires, ms
local gateway = ARGV[1]
local text = ARGV[2]
local now = tonumber(ARGV[3])  -- the publisher's clock, ms
local ttl = tonumber(ARGV[4])  -- ms the board is kept
redis.call('HSET', boards, gateway, text)
redis.call('ZADD', expiry, now + ttl, gateway)
local gone = redis.call('ZRANGEBYSCORE', expiry, '-inf', now)
if #gone > 0 then
  redis.call('HDEL', boards, unpack(gone))
  redis.call('ZREMRANGEBYSCORE', expiry, '-inf', now)
end
-- Both keys last as long as the longest-lived board they hold, no longer.
local last = redis.call('ZRANGE', expiry, -1, -1, 'WITHSCORES')
local keep = math.max(1, tonumber(last[2]) - now)
redis.call('PEXPIRE', boards, keep)
redis.call('PEXPIRE', expiry, keep)
return #gone
`),
);

const READ_SCRIPT: RedisScript = redisScript(
  'BoardRead',
  compact(`
local boards = KEYS[1]         -- hash: gateway -> its latest board
local expiry = KEYS[2]          -- sorted set: gateway -> when its board expires, ms
local now = tonumber(ARGV[1])  -- the reader's clock, ms
local live = redis.call('ZRANGEBYSCORE', expiry, '(' .. now, '+inf')
if #live == 0 then return {} end
return redis.call('HMGET', boards, unpack(live))
`),
);

/** Time limit of each board call: one per gateway every few seconds, none on a request's path. */
export const BOARD_TIMEOUT_MS = 2000;

/**
 * RedisStore's board: one script call to publish (and drop the boards past their TTL), one to read the live
 * ones. While the connection is down a publish fails at once rather than queue for the reconnect: the next
 * interval's board carries the counts on.
 */
export class RedisBoard implements Board {
  readonly #transport: RedisTransport;
  readonly #keys: readonly [string, string];
  readonly #timeoutMs: number;

  constructor(transport: RedisTransport, prefix: string, timeoutMs = BOARD_TIMEOUT_MS) {
    this.#transport = transport;
    this.#keys = boardKeys(prefix);
    this.#timeoutMs = timeoutMs;
  }

  #run(script: RedisScript, args: readonly (string | number)[]): Promise<unknown> {
    if (this.#transport.state() === 'down')
      return Promise.reject(new StoreError('ERR_SLUICE_STORE', 'Redis is not connected'));
    const call = this.#transport.runScript(script, [2, ...this.#keys, ...args], false);
    return withTimeout(
      call,
      this.#timeoutMs,
      () => new Error(`board: no answer from Redis in ${this.#timeoutMs} ms`),
    );
  }

  async publish(gateway: string, text: string, ttlMs: number, now: number): Promise<void> {
    await this.#run(PUBLISH_SCRIPT, [gateway, text, Math.round(now), Math.round(ttlMs)]);
  }

  async read(now: number): Promise<string[]> {
    const reply = (await this.#run(READ_SCRIPT, [Math.round(now)])) as unknown[];
    // A board gone between the two reads of the script is nil: left out.
    return reply.flatMap((text) =>
      text === null || text === false || text === undefined ? [] : [String(text)],
    );
  }
}
