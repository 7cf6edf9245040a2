import { setTimeout as sleep } from 'node:timers/promises';
import { rateLimit } from '@sluice/fastify';
import { prometheusObserver } from '@sluice/prometheus';
import Fastify from 'fastify';
import { accountDescriptors, accountOf, exportDuration, isKnownKey, RULES_PATH } from './accounts.js';
import { failedToListen, listenAddress } from './listen.js';
import { storeFromEnv } from './store.js';

const redis = await storeFromEnv();
// Behind a load balancer set TRUST_PROXY=1, so that the client IP comes from X-Forwarded-For.
const app = Fastify({ trustProxy: process.env.TRUST_PROXY === '1' });
const metrics = prometheusObserver();

await app.register(rateLimit, {
  rules: RULES_PATH,
  ...(redis.store ? { store: redis.store } : {}),
  validateApiKey: isKnownKey,
  descriptors: accountDescriptors,
  observer: metrics,
  skip: (request) => request.url === '/health' || request.url === '/metrics',
});

app.get('/health', async () => ({ ok: true }));
app.get('/metrics', async (_request, reply) =>
  reply.type(metrics.register.contentType).send(await metrics.metrics()),
);

app.get('/search', async (request) => {
  const { q = '' } = request.query as { q?: string };
  return { query: q, results: [`${q} one`, `${q} two`] };
});

app.get('/export', async (request, reply) => {
  await sleep(exportDuration(request.query));
  reply.type('text/csv');
  return 'id,name\n1,alpha\n2,beta\n';
});

app.post('/login', async (request, reply) => {
  const { user, password } = (request.body ?? {}) as { user?: string; password?: string };
  if (user === 'demo' && password === 'demo') return { ok: true };
  return reply.code(401).send({ error: 'wrong user or password' });
});

app.get('/account', async (request, reply) => {
  const account = accountOf(request.headers);
  if (!account) return reply.code(401).send({ error: 'send a valid x-api-key (try k_demo)' });
  return { tenant: account.tenant };
});

app.addHook('onClose', () => redis.close());
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void app.close());

const where = listenAddress();
try {
  const address = await app.listen(where);
  console.log(`public-api listening on ${address} (${redis.description})`);
} catch (error) {
  failedToListen('public-api', error, where);
  await app.close();
}
