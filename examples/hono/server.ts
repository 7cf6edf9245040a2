import { setTimeout as sleep } from 'node:timers/promises';
import { serve } from '@hono/node-server';
import { rateLimit } from '@sluice/hono';
import { type Context, Hono } from 'hono';
import { accountDescriptors, accountOf, exportDuration, RULES_PATH } from '../public-api/accounts.js';
import { failedToListen, listenAddress } from '../public-api/listen.js';
import { storeFromEnv } from '../public-api/store.js';

// The public-api example's routes and rules, served by Hono on Node.
const redis = await storeFromEnv();
const app = new Hono();

/** The example's account helpers read Node-style headers: the one they need. */
const headersOf = (c: Context) => ({ 'x-api-key': c.req.header('x-api-key') });

const limiter = rateLimit({
  rules: RULES_PATH,
  ...(redis.store ? { store: redis.store } : {}),
  // Hono has no proxy setting of its own: one proxy in front (TRUST_PROXY=1) names the client.
  trustProxy: process.env.TRUST_PROXY === '1' ? 1 : false,
  descriptors: (c) => accountDescriptors({ headers: headersOf(c) }),
  // Only the example's real keys count as keys: a made-up x-api-key is anonymous, limited per IP.
  validateApiKey: (_key, c) => accountOf(headersOf(c)) !== undefined,
  skip: (c) => c.req.path === '/health',
});
app.use(limiter);

app.get('/health', (c) => c.json({ ok: true }));

// A route-level rule on top of the global ones: ten searches a second per client IP.
app.get(
  '/search',
  limiter.route({ name: 'search_burst', key: ['ip'], limit: { requests: 10, per: '1s' } }),
  (c) => {
    const q = c.req.query('q') ?? '';
    return c.json({ query: q, results: [`${q} one`, `${q} two`], remaining: c.get('rateLimit')?.remaining });
  },
);

app.get('/export', async (c) => {
  await sleep(exportDuration(c.req.query()));
  return c.body('id,name\n1,alpha\n2,beta\n', 200, { 'content-type': 'text/csv' });
});

app.post('/login', async (c) => {
  const { user, password } = (await c.req.json().catch(() => ({}))) as { user?: string; password?: string };
  return user === 'demo' && password === 'demo'
    ? c.json({ ok: true })
    : c.json({ error: 'wrong user or password' }, 401);
});

app.get('/account', (c) => {
  const account = accountOf(headersOf(c));
  return account
    ? c.json({ tenant: account.tenant })
    : c.json({ error: 'send a valid x-api-key (try k_demo)' }, 401);
});

const where = listenAddress();
const closeAll = () => void limiter.limiter.close().then(() => redis.close());
const server = serve({ fetch: app.fetch, port: where.port, hostname: where.host }, (info) => {
  console.log(`hono example listening on http://${where.host}:${info.port}`);
});
server.once('error', (error) => {
  failedToListen('hono example', error, where, 'npx tsx examples/hono/server.ts');
  closeAll();
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    server.close();
    closeAll();
  });
}
