/** The Koa app of a bench server: one GET route behind the limiter under test. */
import { rateLimit } from '@sluice/koa';
import Koa, { type Context, type Middleware } from 'koa';
import koaRateLimit from 'koa-ratelimit';
import type { ServerSpec } from '../lib/spec.js';
import {
  headerOf,
  isSluice,
  NEVER_REACHED_WINDOW,
  PEER_KEYS,
  peerLayers,
  redisClient,
  sluiceOptions,
  type Tally,
} from './common.js';

/** Builds the app. */
export function koaApp(spec: ServerSpec, tally: Tally): Koa {
  const app = new Koa();
  for (const middleware of limiters(spec, tally)) app.use(middleware);
  app.use((ctx) => {
    ctx.body = 'ok';
  });
  return app;
}

function limiters(spec: ServerSpec, tally: Tally): Middleware[] {
  if (spec.limiter === 'none') return [];
  if (isSluice(spec.limiter)) {
    return [rateLimit(sluiceOptions<Context>(spec, tally, (ctx, name) => headerOf(ctx.headers, name)))];
  }
  const redis = spec.limiter === 'peer-redis' ? redisClient(spec, tally) : undefined;
  return PEER_KEYS.slice(0, peerLayers(spec.rules)).map((key, layer) =>
    koaRateLimit({
      driver: redis ? 'redis' : 'memory',
      db: redis ?? new Map(),
      duration: NEVER_REACHED_WINDOW.windowMs,
      max: NEVER_REACHED_WINDOW.max,
      id: (ctx: Context) => `${spec.prefix}-${layer}:${key(ctx.headers)}`,
    }),
  );
}
