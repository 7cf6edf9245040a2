/** The Fastify app of a bench server: one GET route behind the limiter under test. */
import fastifyRateLimit from '@fastify/rate-limit';
import { rateLimit } from '@sluice/fastify';
import Fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifyRequest } from 'fastify';
import { ROTATING_KEYS, type ServerSpec } from '../lib/spec.js';
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

/** Builds the app; the route is registered inside the innermost limiter's context. */
export async function fastifyApp(spec: ServerSpec, tally: Tally): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  const route: FastifyPluginAsync = async (scope) => {
    scope.get('/', async () => 'ok');
  };
  if (spec.limiter === 'none') {
    await app.register(route);
  } else if (isSluice(spec.limiter)) {
    await app.register(
      rateLimit,
      sluiceOptions<FastifyRequest>(spec, tally, (req, name) => headerOf(req.headers, name)),
    );
    await app.register(route);
  } else {
    await app.register(peerLayer(spec, tally, 0, route));
  }
  return app;
}

/**
 * Keys @fastify/rate-limit's in-memory store holds. Its default (`cache: 5000`) is below the bench's rotating
 * keys: each key's counter was evicted before its next request, so the peer counted every request as a key's
 * first (never limiting, and allocating a new counter each time). Sluice's MemoryStore holds them all.
 */
const PEER_CACHE = 2 * ROTATING_KEYS;

/**
 * @fastify/rate-limit runs once per request per registration: stacking three limiters means three nested
 * registrations, each with its own key generator (and its own store).
 */
function peerLayer(
  spec: ServerSpec,
  tally: Tally,
  layer: number,
  route: FastifyPluginAsync,
): FastifyPluginAsync {
  return async (scope) => {
    const key = PEER_KEYS[layer]!;
    await scope.register(fastifyRateLimit, {
      max: NEVER_REACHED_WINDOW.max,
      timeWindow: NEVER_REACHED_WINDOW.windowMs,
      keyGenerator: (req) => key(req.headers),
      ...(spec.limiter === 'peer-redis'
        ? { redis: redisClient(spec, tally), nameSpace: `${spec.prefix}-${layer}-` }
        : { cache: PEER_CACHE }),
    });
    await scope.register(
      layer + 1 < peerLayers(spec.rules) ? peerLayer(spec, tally, layer + 1, route) : route,
    );
  };
}
