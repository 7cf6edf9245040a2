import type { CompiledRules, Limiter, RuleSpec } from '@sluice/core';
import {
  type CheckScope,
  createHttpLimiter,
  type DeniedResponse,
  fastifyTrust,
  type InlineLimit,
  type RateLimitInfo,
  type RateLimitOptions,
  type RouteOptions as RouteConfigOptions,
  reportWhenDone,
  routeRuleName,
  splitAfterBody,
  UNMATCHED_ROUTE,
  verdictWriter,
  waitUnlessClosed,
} from '@sluice/core/http';
import type {
  HookHandlerDoneFunction as Done,
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
  RouteOptions,
} from 'fastify';
import fp from 'fastify-plugin';
import { FastifyFacts } from './facts.js';

/** Options of the Fastify plugin: the shared adapter options plus a Fastify-typed `onDenied`. */
export interface FastifyRateLimitOptions extends RateLimitOptions<FastifyRequest> {
  /** Sends your own denial; the default is a JSON 429 (503 when a rule failed closed). */
  onDenied?: (request: FastifyRequest, reply: FastifyReply, denied: DeniedResponse) => unknown;
}

/**
 * Per-route rate limiting: rules that apply to this route only, the shorthand (`{limit: 5, per: '1m'}`, its
 * rule named after the route unless `name` is given), or `false` to turn limiting off. With `afterBody: true`
 * the route is decided in a preValidation hook, once its body is parsed: `cost(request)` reads `request.body`.
 */
export type RouteRateLimitConfig =
  | false
  | ({ readonly rules: readonly RuleSpec[] } & RouteConfigOptions)
  | (InlineLimit & RouteConfigOptions);

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Route-level rules (checked with the global ones, in one store call), or false to skip the route. */
    rateLimit?: RouteRateLimitConfig;
  }
  interface FastifyInstance {
    /** The limiter behind the plugin (reload rules with `setRules`, explain, release). */
    rateLimiter: Limiter;
  }
  interface FastifyRequest {
    /** This request's limit as its RateLimit headers show it (set by @sluice/fastify). */
    rateLimit?: RateLimitInfo;
  }
}

const ALL_RULES: CheckScope = Object.freeze({});
const nothing = (): void => {};

// Keys Fastify itself gives every plugin's options; they are not limiter options.
const REGISTER_KEYS = new Set(['prefix', 'logLevel', 'logSerializers']);

const plugin: FastifyPluginAsync<FastifyRateLimitOptions> = async (fastify, given) => {
  const options = Object.fromEntries(Object.entries(given).filter(([key]) => !REGISTER_KEYS.has(key)));
  // One onRequest hook checks the global and route rules together, once per request.
  const http = createHttpLimiter<FastifyRequest, FastifyRateLimitOptions>(options, { checksOnce: true });
  const trust = fastifyTrust(fastify);
  /** The `config.rateLimit` objects of routes decided after their body is parsed. */
  const afterBody = new WeakSet<object>();
  /** Each route's scope by its `config.rateLimit` object (shared by a GET route and its HEAD twin). */
  const routeScopes = new WeakMap<object, CheckScope>();

  fastify.decorate('rateLimiter', http.limiter);
  fastify.decorateRequest('rateLimit', undefined);
  fastify.addHook('onClose', async () => http.limiter.close());

  // Route rules are compiled when the route registers, so a wrong config fails at start-up.
  fastify.addHook('onRoute', (route: RouteOptions) => {
    const config = (route.config as { rateLimit?: unknown } | undefined)?.rateLimit;
    if (config === undefined || config === false) return;
    routeRulesOf(config, route);
    // `afterBody`: the route is decided once Fastify has parsed its body, in a hook of its own.
    if (!splitAfterBody(config, `route ${String(route.method)} ${route.url}`).afterBody) return;
    afterBody.add(config as object);
    route.preValidation = [afterBodyHook, ...hooksOf(route.preValidation)];
  });

  // One hook for every request of this context, 404s included, and routes declared before the plugin finished
  // loading (a register that was not awaited): hooks apply to them, onRoute would not.
  fastify.addHook('onRequest', (request, reply, done) => {
    // Fastify builds this object anew on every read: read it once.
    const route = request.routeOptions;
    const config = (route.config as { rateLimit?: unknown } | undefined)?.rateLimit;
    if (config === false || afterBody.has(config as object)) {
      done();
      return;
    }
    // A request no route matches (Fastify's 404 handler) has no url: every one has the same `route`.
    const template = route.url ?? UNMATCHED_ROUTE;
    limit(request, reply, done, config === undefined ? ALL_RULES : scopeOf(config, route), template);
  });

  function afterBodyHook(request: FastifyRequest, reply: FastifyReply, done: Done): void {
    const route = request.routeOptions;
    const config = (route.config as { rateLimit?: unknown }).rateLimit;
    limit(request, reply, done, scopeOf(config, route), route.url ?? UNMATCHED_ROUTE);
  }

  /**
   * A route's scope. Its rules were compiled at onRoute, unless the route was declared before the plugin had
   * loaded (a register not awaited): then they are compiled on its first request, and a wrong config is
   * reported and leaves the global rules only.
   */
  function scopeOf(config: unknown, route: { method: unknown; url?: string }): CheckScope {
    const known = routeScopes.get(config as object);
    if (known !== undefined) return known;
    let scope: CheckScope = ALL_RULES;
    try {
      scope = { rules: routeRulesOf(config, route) };
    } catch (error) {
      http.report(error, 'check');
    }
    // A config that is not an object cannot be remembered (nor compiled): it is reported on each request.
    if (typeof config === 'object' && config !== null) routeScopes.set(config, scope);
    return scope;
  }

  /** Compiles a route's rules once (a GET route and its HEAD twin share their config). */
  function routeRulesOf(config: unknown, route: { method: unknown; url?: string }): CompiledRules {
    const known = typeof config === 'object' && config !== null ? routeScopes.get(config)?.rules : undefined;
    if (known !== undefined) return known;
    const { method, url = '' } = route;
    const rules = http.compileRouteConfig(
      config,
      `route ${String(method)} ${url}`,
      routeRuleName(String(method), url),
    );
    routeScopes.set(config as object, { rules });
    return rules;
  }

  // A callback hook, not an async one: a request decided in process waits on no promise at all.
  function limit(
    request: FastifyRequest,
    reply: FastifyReply,
    done: Done,
    scope: CheckScope,
    template: string,
  ): void {
    const verdict = http.check(request, new FastifyFacts(request, template, trust), scope);
    if (verdict instanceof Promise) verdict.then((settled) => act(request, reply, done, settled)).catch(done);
    else act(request, reply, done, verdict);
  }

  /** Carries out a verdict: on to the route (`done`), or a denial sent here (and no `done`). */
  const act = verdictWriter<FastifyRequest, FastifyReply, Done, void>(
    {
      proceed: (_request, _reply, done) => done(),
      stop: nothing,
      later: (_request, _reply, done, pending) => void pending.catch(done),
      setInfo: (request, _reply, info) => {
        request.rateLimit = info;
      },
      sent: (_request, reply) => reply.sent,
      setHeaders: (_request, reply, headers) => void reply.headers(headers),
      whenDone: (_request, reply, done, onResponse) => {
        reportWhenDone(reply.raw, onResponse);
        return done;
      },
      wait: (_request, reply, ms) => waitUnlessClosed(reply.raw, ms),
      // The client left while waiting: the route never runs, and nothing is sent.
      left: (_request, reply) => reply.hijack(),
      onDenied: http.options.onDenied,
      answered: (_request, reply) => (reply.sent ? reply : undefined),
      sendDenied: (_request, reply, denied) =>
        reply.code(denied.status).headers(denied.headers).send(denied.body),
    },
    http.report,
  );
};

/** A route's hooks of one kind as a list (Fastify takes one function or a list). */
function hooksOf<T>(hooks: T | readonly T[] | undefined): readonly T[] {
  return hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks as T];
}

/** The Fastify plugin: `await app.register(rateLimit, options)` before the routes it should limit. */
export const rateLimit = fp(plugin, { fastify: '5.x', name: '@sluice/fastify' });
