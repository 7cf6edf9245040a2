// An ESM Hono app as a user writes it: the shorthand, 3 requests an hour per IP, served by @hono/node-server.
import { serve } from '@hono/node-server';
import { rateLimit } from '@sluice/hono';
import { Hono } from 'hono';

const app = new Hono();
app.use(rateLimit({ limit: 3, per: '1h' }));
app.get('/', (c) => c.json({ hello: 'world' }));
serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
  console.log(`listening ${info.port}`);
});
