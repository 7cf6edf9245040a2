import { ConfigError, type Limiter, type RuleSpec } from '@sluice/core';
import {
  ALL_RULES,
  callbackStyle,
  closest,
  createHttpLimiter,
  type DeniedResponse,
  type InlineLimit,
  nodeVerdictWriter,
  type RateLimitInfo,
  type RateLimitOptions,
  type RouteOptions as RouteConfigOptions,
  RouteScopes,
  routeRuleName,
  splitAfterBody,
  UNMATCHED_ROUTE,
} from '@sluice/core/http';
import type {
  HookHandlerDoneFunction as Done,
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
  RouteOptions,
} from 'fastify';
import fp from 'fastify-plugin';
import { FastifyFacts, type FastifyRouteConfig, fastifyRouteConfig, fastifyTrust } from './facts.js';

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

// Keys Fastify itself gives every plugin's options; they are not limiter options.
const REGISTER_KEYS = new Set(['prefix', 'logLevel', 'logSerializers']);
/** Marks the config of a @fastify/websocket route (Fastify copies a route's config, symbol keys included). */
const WEBSOCKET_ROUTE = Symbol('sluice.websocketRoute');

const plugin: FastifyPluginAsync<FastifyRateLimitOptions> = async (fastify, given) => {
  // A second register in one context would count each request twice; Fastify's own refusal names a decorator.
  if (fastify.hasDecorator('rateLimiter'))
    throw new ConfigError(
      '@sluice/fastify is registered twice in this context: register it once, and give routes their own ' +
        'limits in `config.rateLimit`',
    );
  const options = Object.fromEntries(Object.entries(given).filter(([key]) => !REGISTER_KEYS.has(key)));
  // One onRequest hook checks the global and route rules together, once per request.
  const http = createHttpLimiter<FastifyRequest, FastifyRateLimitOptions>(options, {
    checksOnce: true,
    lowerCaseHeaders: true,
  });
  const trust = fastifyTrust(fastify);
  /** The `config.rateLimit` objects of routes decided after their body is parsed. */
  const afterBody = new WeakSet<object>();
  /** Each route's scope by its `config.rateLimit` object (shared by a GET route and its HEAD twin). */
  const scopes = new RouteScopes(http, (method, url = '') => ({
    label: `route ${method} ${url}`,
    rule: routeRuleName(method, url),
  }));

  fastify.decorate('rateLimiter', http.limiter);
  fastify.decorateRequest('rateLimit', undefined);
  fastify.addHook('onClose', async () => http.limiter.close());

  // Route rules are compiled when the route registers, so a wrong config fails at start-up.
  fastify.addHook('onRoute', (route: RouteOptions) => {
    const { websocket, wsHandler } = route as { websocket?: unknown; wsHandler?: unknown };
    if (websocket === true || wsHandler !== undefined)
      route.config = Object.assign({ [WEBSOCKET_ROUTE]: true }, route.config);
    const config = (route.config as { rateLimit?: unknown } | undefined)?.rateLimit;
    if (config === undefined) refuseMisspelledConfig(route);
    if (config === undefined || config === false) return;
    scopes.compile(config, String(route.method), route.url);
    // `afterBody`: the route is decided once Fastify has parsed its body, in a hook of its own.
    if (!splitAfterBody(config, `route ${String(route.method)} ${route.url}`).afterBody) return;
    afterBody.add(config as object);
    route.preValidation = [afterBodyHook, ...hooksOf(route.preValidation)];
  });

  // One hook for every request of this context, 404s included, and routes declared before the plugin finished
  // loading (a register that was not awaited): hooks apply to them, onRoute would not.
  fastify.addHook('onRequest', (request, reply, done) => {
    const route = fastifyRouteConfig(request);
    const config = route?.rateLimit;
    if (config === false || afterBody.has(config as object)) done();
    else limit(request, reply, done, route, config);
  });

  function afterBodyHook(request: FastifyRequest, reply: FastifyReply, done: Done): void {
    const route = fastifyRouteConfig(request);
    limit(request, reply, done, route, route?.rateLimit);
  }

  // A callback hook, not an async one: a request decided in process waits on no promise at all.
  function limit(
    request: FastifyRequest,
    reply: FastifyReply,
    done: Done,
    route: FastifyRouteConfig | undefined,
    config: unknown,
  ): void {
    const url = route?.url;
    const scope = config === undefined ? ALL_RULES : scopes.scopeOf(config, String(route?.method), url);
    // A request no route matches (Fastify's 404 handler) has no url: every one has the same `route`.
    const facts = new FastifyFacts(request, url ?? UNMATCHED_ROUTE, trust);
    // A websocket route's upgrade is @sluice/websocket's to count; a 429 from here would leave its socket open.
    if (isWebsocketUpgrade(request, route)) done();
    else act(request, reply, done, http.check(request, facts, scope));
  }

  /** Carries out a verdict: on to the route (`done`), or a denial sent here (and no `done`). */
  const act = nodeVerdictWriter<FastifyRequest, FastifyReply, Done, void>(
    {
      response: (_request, reply) => reply.raw,
      setInfo: (request, _reply, info) => {
        request.rateLimit = info;
      },
      sent: (_request, reply) => reply.sent,
      // `reply.header()` keeps headers on the reply until Fastify hands them to writeHead: read them there.
      responseHeader: (_request, reply) => (name) => reply.getHeader(name),
      setHeaders: (_request, reply, headers) => void reply.headers(headers),
      // The client left while waiting: the route never runs, and nothing is sent.
      left: (_request, reply) => reply.hijack(),
      onDenied: http.options.onDenied,
      sendDenied: (_request, reply, denied) =>
        reply.code(denied.status).headers(denied.headers).send(denied.body),
    },
    callbackStyle(),
    http.report,
  );
};

/**
 * A route config key one or two letters from `rateLimit` (`rateLimt`, `ratelimit`) would leave the route on the
 * global rules alone, silently: refused at start-up with a did-you-mean. Other keys are the app's own.
 */
function refuseMisspelledConfig(route: RouteOptions): void {
  const misspelled = Object.keys(route.config ?? {}).find((key) => closest(key, ['rateLimit']) !== undefined);
  if (misspelled !== undefined)
    throw new ConfigError(
      `route ${String(route.method)} ${route.url}: config key "${misspelled}" (did you mean "rateLimit"?)`,
    );
}

/** An upgrade (Node's test: `Connection: upgrade` and an `Upgrade` header) to a route marked by onRoute. */
function isWebsocketUpgrade(request: FastifyRequest, route: FastifyRouteConfig | undefined): boolean {
  if (route === undefined || !(WEBSOCKET_ROUTE in route)) return false;
  const { connection = '', upgrade } = request.headers;
  return upgrade !== undefined && /\bupgrade\b/i.test(connection);
}

/** A route's hooks of one kind as a list (Fastify takes one function or a list). */
function hooksOf<T>(hooks: T | readonly T[] | undefined): readonly T[] {
  return hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks as T];
}

/** The Fastify plugin: `await app.register(rateLimit, options)` before the routes it should limit. */
export const rateLimit = fp(plugin, { fastify: '5.x', name: '@sluice/fastify' });
