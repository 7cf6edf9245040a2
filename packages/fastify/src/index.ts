import {
  type CompiledRules,
  ConfigError,
  createHttpLimiter,
  type DeniedResponse,
  type Limiter,
  type RateLimitOptions,
  type RequestFacts,
  type RuleSpec,
  releaseWhenDone,
  type Verdict,
  waitUnlessClosed,
} from '@sluice/core';
import type {
  HookHandlerDoneFunction as Done,
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
  RouteOptions,
} from 'fastify';
import fp from 'fastify-plugin';

/** Options of the Fastify plugin: the shared adapter options plus a Fastify-typed `onDenied`. */
export interface FastifyRateLimitOptions extends RateLimitOptions<FastifyRequest> {
  /** Sends your own denial; the default is a JSON 429 (503 when a rule failed closed). */
  onDenied?: (request: FastifyRequest, reply: FastifyReply, denied: DeniedResponse) => unknown;
}

/** Per-route rate limiting: rules that apply to this route only, or `false` to turn limiting off. */
export type RouteRateLimitConfig = false | { readonly rules: readonly RuleSpec[] };

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Route-level rules (checked with the global ones, in one store call), or false to skip the route. */
    rateLimit?: RouteRateLimitConfig;
  }
  interface FastifyInstance {
    /** The limiter behind the plugin (reload rules with `setRules`, explain, release). */
    rateLimiter: Limiter;
  }
}

const ALL_RULES = Object.freeze({});

// Keys Fastify itself gives every plugin's options; they are not limiter options.
const REGISTER_KEYS = new Set(['prefix', 'logLevel', 'logSerializers']);

const plugin: FastifyPluginAsync<FastifyRateLimitOptions> = async (fastify, given) => {
  const options = Object.fromEntries(Object.entries(given).filter(([key]) => !REGISTER_KEYS.has(key)));
  const http = createHttpLimiter<FastifyRequest, FastifyRateLimitOptions>(options);
  const routeRules = new WeakMap<object, CompiledRules>();

  fastify.decorate('rateLimiter', http.limiter);
  fastify.addHook('onClose', async () => http.limiter.close());

  fastify.addHook('onRoute', (route: RouteOptions) => {
    const config = (route.config as { rateLimit?: unknown } | undefined)?.rateLimit;
    // HEAD routes Fastify adds share their GET route's config: compile it once.
    if (config === undefined || config === false || routeRules.has(config as object)) return;
    const label = `route ${String(route.method)} ${route.url}`;
    if (typeof config !== 'object' || config === null) {
      throw new ConfigError(`${label}: config.rateLimit must be false or {rules: [...]}`);
    }
    routeRules.set(config, http.compileRouteRules((config as { rules?: unknown }).rules, label));
  });

  // A callback hook, not an async one: a request decided in process waits on no promise at all.
  fastify.addHook('onRequest', (request, reply, done) => {
    const config = request.routeOptions.config.rateLimit;
    if (config === false) return done();
    const rules = config ? routeRules.get(config) : undefined;
    const verdict = http.check(request, new FastifyFacts(request), rules ? { rules } : ALL_RULES);
    if (verdict instanceof Promise) verdict.then((settled) => act(request, reply, settled, done), done);
    else act(request, reply, verdict, done);
  });

  /** Carries out a verdict: on to the route (`done`), or a denial sent here (and no `done`). */
  function act(request: FastifyRequest, reply: FastifyReply, verdict: Verdict, done: Done): void {
    if (verdict.action === 'skip') {
      done();
      return;
    }
    if (verdict.action === 'deny') {
      deny(request, reply, verdict.denied).catch(done);
      return;
    }
    reply.headers(verdict.headers);
    // Leases to hand back when the response ends; none (the usual case): no listeners.
    if (verdict.decision.leases.length > 0) releaseWhenDone(reply.raw, verdict.release);
    if (verdict.delayMs <= 0) {
      done();
      return;
    }
    waitUnlessClosed(reply.raw, verdict.delayMs).then(async (stillThere) => {
      if (stillThere) return done();
      // The client left while waiting: serve nothing.
      await verdict.cancel();
      reply.hijack();
    }, done);
  }

  async function deny(
    request: FastifyRequest,
    reply: FastifyReply,
    denied: DeniedResponse,
  ): Promise<FastifyReply> {
    if (http.options.onDenied) {
      try {
        await http.options.onDenied(request, reply, denied);
      } catch (error) {
        http.report(error, 'on_denied');
      }
      if (reply.sent) return reply;
    }
    return reply.code(denied.status).headers(denied.headers).send(denied.body);
  }
};

/** What the limiter reads off a Fastify request; a class, so no closure is made per request. */
class FastifyFacts implements RequestFacts {
  readonly ip: string;
  readonly method: string;
  readonly url: string;
  readonly route: string | undefined;
  readonly proxyTrust: 'none' | undefined;
  readonly #headers: FastifyRequest['headers'];

  constructor(request: FastifyRequest) {
    this.ip = request.ip;
    this.method = request.method;
    this.url = request.url;
    this.route = request.routeOptions.url;
    this.#headers = request.headers;
    // Fastify does not expose trustProxy: a forwarded header that did not change the address was ignored.
    this.proxyTrust =
      request.headers['x-forwarded-for'] !== undefined && request.ip === request.socket.remoteAddress
        ? 'none'
        : undefined;
  }

  header(name: string): string | readonly string[] | undefined {
    return this.#headers[name];
  }
}

/** The Fastify plugin: `await app.register(rateLimit, options)` before the routes it should limit. */
export const rateLimit = fp(plugin, { fastify: '5.x', name: '@sluice/fastify' });
