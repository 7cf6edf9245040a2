import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { rateLimit } from '@sluice/express';
import express from 'express';
import { accountDescriptors, accountOf, exportDuration, RULES_PATH } from '../public-api/accounts.js';
import { failedToListen, listenAddress } from '../public-api/listen.js';
import { storeFromEnv } from '../public-api/store.js';

// The public-api example's routes and rules, served by Express.
const redis = await storeFromEnv();
const app = express();
app.set('trust proxy', process.env.TRUST_PROXY === '1');
const limiter = rateLimit({
  rules: RULES_PATH,
  ...(redis.store ? { store: redis.store } : {}),
  descriptors: accountDescriptors,
  // Only the example's real keys count as keys: a made-up x-api-key is anonymous, limited per IP.
  validateApiKey: (_key, req) => accountOf(req.headers) !== undefined,
  skip: (req) => req.path === '/health',
});
app.use(limiter);
app.use(express.json()); // after the limiter: a denied request's body is never parsed

app.get('/health', (_req, res) => {
  res.json({ ok: true });
});

// A route-level rule on top of the global ones: ten searches a second per client IP.
app.get(
  '/search',
  limiter.route({ name: 'search_burst', key: ['ip'], limit: { requests: 10, per: '1s' } }),
  (req, res) => {
    const q = typeof req.query.q === 'string' ? req.query.q : '';
    res.json({ query: q, results: [`${q} one`, `${q} two`] });
  },
);

app.get('/export', async (req, res) => {
  await sleep(exportDuration(req.query));
  res.type('text/csv').send('id,name\n1,alpha\n2,beta\n');
});

app.post('/login', (req, res) => {
  const { user, password } = (req.body ?? {}) as { user?: string; password?: string };
  if (user === 'demo' && password === 'demo') res.json({ ok: true });
  else res.status(401).json({ error: 'wrong user or password' });
});

app.get('/account', (req, res) => {
  const account = accountOf(req.headers);
  if (account) res.json({ tenant: account.tenant });
  else res.status(401).json({ error: 'send a valid x-api-key (try k_demo)' });
});

const where = listenAddress();
const closeAll = () => void limiter.limiter.close().then(() => redis.close());
// Express 5 hands a listening error to this callback.
const server = app.listen(where.port, where.host, (error?: Error) => {
  if (error) {
    failedToListen('express example', error, where, 'npx tsx examples/express/server.ts');
    closeAll();
    return;
  }
  const { port } = server.address() as AddressInfo;
  console.log(`express example listening on http://${where.host}:${port}`);
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    server.close();
    server.closeAllConnections();
    closeAll();
  });
}
