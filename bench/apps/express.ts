/** The Express app of a bench server: one GET route behind the limiter under test. */
import { rateLimit } from '@sluice/express';
import express, { type Express, type Request, type RequestHandler } from 'express';
import { rateLimit as expressRateLimit } from 'express-rate-limit';
import { RedisStore as RateLimitRedisStore, type RedisReply } from 'rate-limit-redis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
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
export function expressApp(spec: ServerSpec, tally: Tally): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  for (const handler of limiters(spec, tally)) app.use(handler);
  app.get('/', (_req, res) => {
    res.send('ok');
  });
  return app;
}

function limiters(spec: ServerSpec, tally: Tally): RequestHandler[] {
  if (spec.limiter === 'none') return [];
  if (isSluice(spec.limiter)) {
    return [rateLimit(sluiceOptions<Request>(spec, tally, (req, name) => headerOf(req.headers, name)))];
  }
  const keys = PEER_KEYS.slice(0, peerLayers(spec.rules));
  if (spec.limiter === 'rlflex-redis') return [flexible(spec, keys, tally)];
  const client = spec.limiter === 'peer-redis' ? redisClient(spec, tally) : undefined;
  return keys.map((key, layer) =>
    expressRateLimit({
      windowMs: NEVER_REACHED_WINDOW.windowMs,
      limit: NEVER_REACHED_WINDOW.max,
      keyGenerator: (req) => key(req.headers),
      standardHeaders: 'draft-8',
      legacyHeaders: false,
      validate: false,
      ...(client
        ? {
            store: new RateLimitRedisStore({
              sendCommand: (command: string, ...args: string[]) =>
                client.call(command, ...args) as Promise<RedisReply>,
              prefix: `${spec.prefix}-${layer}:`,
            }),
          }
        : {}),
    }),
  );
}

/** rate-limiter-flexible stacked: one RateLimiterRedis per rule, consumed together. */
function flexible(spec: ServerSpec, keys: typeof PEER_KEYS, tally: Tally): RequestHandler {
  const storeClient = redisClient(spec, tally);
  const limiters = keys.map(
    (_, layer) =>
      new RateLimiterRedis({
        storeClient,
        points: NEVER_REACHED_WINDOW.max,
        duration: NEVER_REACHED_WINDOW.windowMs / 1000,
        keyPrefix: `${spec.prefix}-${layer}`,
      }),
  );
  return (req, res, next) => {
    Promise.all(limiters.map((limiter, i) => limiter.consume(keys[i]!(req.headers)))).then(
      () => next(),
      (rejection: unknown) => {
        if (rejection instanceof Error) tally.storeErrors += 1;
        res.status(429).send('too many requests');
      },
    );
  };
}
