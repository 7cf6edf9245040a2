// An ESM Fastify app as a user writes it: a rules file, and a tighter limit on one route.
import { fileURLToPath } from 'node:url';
import { rateLimit } from '@sluice/fastify';
import Fastify from 'fastify';

const app = Fastify();
await app.register(rateLimit, { rules: fileURLToPath(new URL('./rules.yaml', import.meta.url)) });
app.get(
  '/search',
  {
    config: {
      rateLimit: { rules: [{ name: 'search_burst', key: ['ip'], limit: { requests: 2, per: '1h' } }] },
    },
  },
  async () => ({ results: [] }),
);
app.get('/', async () => ({ hello: 'world' }));
await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`listening ${app.server.address().port}`);
