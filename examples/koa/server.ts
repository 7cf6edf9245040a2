import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import Router from '@koa/router';
import { rateLimit } from '@sluice/koa';
import Koa from 'koa';
import { accountDescriptors, accountOf, exportDuration, RULES_PATH } from '../public-api/accounts.js';
import { failedToListen, listenAddress } from '../public-api/listen.js';
import { storeFromEnv } from '../public-api/store.js';

// The public-api example's routes and rules, served by Koa and @koa/router.
const redis = await storeFromEnv();
const app = new Koa();
app.proxy = process.env.TRUST_PROXY === '1';

const limiter = rateLimit({
  rules: RULES_PATH,
  ...(redis.store ? { store: redis.store } : {}),
  descriptors: accountDescriptors,
  // Only the example's real keys count as keys: a made-up x-api-key is anonymous, limited per IP.
  validateApiKey: (_key, ctx) => accountOf(ctx.headers) !== undefined,
  skip: (ctx) => ctx.path === '/health',
});
app.use(limiter);

const router = new Router();
router.get('/health', (ctx) => {
  ctx.body = { ok: true };
});
// A route-level rule on top of the global ones: ten searches a second per client IP.
router.get(
  '/search',
  limiter.route({ name: 'search_burst', key: ['ip'], limit: { requests: 10, per: '1s' } }),
  (ctx) => {
    const q = typeof ctx.query.q === 'string' ? ctx.query.q : '';
    ctx.body = { query: q, results: [`${q} one`, `${q} two`] };
  },
);
router.get('/export', async (ctx) => {
  await sleep(exportDuration(ctx.query));
  ctx.type = 'text/csv';
  ctx.body = 'id,name\n1,alpha\n2,beta\n';
});
router.post('/login', async (ctx) => {
  // The demo accepts no body parser dependency: it reads the JSON itself.
  let text = '';
  for await (const chunk of ctx.req) text += chunk;
  let body: { user?: string; password?: string } = {};
  try {
    body = JSON.parse(text || '{}') ?? {};
  } catch {
    // A body that is not JSON is a wrong login like any other.
  }
  if (body.user === 'demo' && body.password === 'demo') ctx.body = { ok: true };
  else {
    ctx.status = 401;
    ctx.body = { error: 'wrong user or password' };
  }
});
router.get('/account', (ctx) => {
  const account = accountOf(ctx.headers);
  ctx.status = account ? 200 : 401;
  ctx.body = account ? { tenant: account.tenant } : { error: 'send a valid x-api-key (try k_demo)' };
});
app.use(router.routes()).use(router.allowedMethods());

const where = listenAddress();
const closeAll = () => void limiter.limiter.close().then(() => redis.close());
const server = app.listen(where.port, where.host, () => {
  const { port } = server.address() as AddressInfo;
  console.log(`koa example listening on http://${where.host}:${port}`);
});
server.once('error', (error) => {
  failedToListen('koa example', error, where, 'npx tsx examples/koa/server.ts');
  closeAll();
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    server.close();
    server.closeAllConnections();
    closeAll();
  });
}
