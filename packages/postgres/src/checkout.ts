import type { Pool, PoolClient } from 'pg';

const guarded = new WeakSet<PoolClient>();
const absorb = (): void => {};

/**
 * A connection from the pool, guarded. A connection that breaks while the store holds it between two queries
 * (the server killed mid-call) makes pg emit `error` on the client, and an `error` event with no listener
 * crashes the process: a store outage must never do that. The store learns of the break anyway, from the
 * query that fails next, so the event is only absorbed. One listener per connection, for its life.
 */
export async function checkout(pool: Pool): Promise<PoolClient> {
  const client = await pool.connect();
  if (!guarded.has(client)) {
    guarded.add(client);
    client.on('error', absorb);
  }
  return client;
}
