import type { RequestFacts } from '@sluice/core/http';
import { type ProxyTrust, settingTrust } from '@sluice/core/http';

/**
 * A Fastify instance's `trustProxy` setting, as the proxy notices read it (@sluice/fastify, and NestJS on
 * @nestjs/platform-fastify). Fastify 5 has no public accessor: it is read from the options the instance keeps
 * under a symbol; undefined when they cannot be found.
 */
export function fastifyTrust(instance: object): ProxyTrust | undefined {
  for (let holder: object | null = instance; holder !== null; holder = Object.getPrototypeOf(holder)) {
    const key = Object.getOwnPropertySymbols(holder).find(
      (symbol) => symbol.description === 'fastify.options',
    );
    if (key === undefined) continue;
    return settingTrust((holder as Record<symbol, { trustProxy?: unknown } | undefined>)[key]?.trustProxy);
  }
  return undefined;
}

/**
 * What the limiter reads of a Fastify request (@sluice/fastify, and NestJS on @nestjs/platform-fastify): the
 * fields of Fastify's own `FastifyRequest` it needs, so core imports no framework.
 */
export interface FastifyRequestFields {
  readonly ip: string;
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly socket: { readonly remoteAddress?: string | undefined };
  /** The Fastify instance: it keeps the app's `trustProxy`. */
  readonly server?: object;
}

/**
 * What the limiter reads off a Fastify request; a class, so no closure is made per request. The address only
 * when read (Fastify works it out per read, from the socket and its proxy setting): tables keyed by API key
 * alone never read it.
 */
export class FastifyFacts implements RequestFacts {
  readonly method: string;
  readonly url: string;
  readonly route: string | undefined;
  readonly #request: FastifyRequestFields;
  readonly #trust: ProxyTrust | undefined;
  #ip: string | undefined;

  /** `trust`: the app's `trustProxy` when read at start-up; else read off `request.server` when asked. */
  constructor(request: FastifyRequestFields, route: string | undefined, trust?: ProxyTrust) {
    this.method = request.method;
    this.url = request.url;
    this.route = route;
    this.#request = request;
    this.#trust = trust;
  }

  get ip(): string {
    this.#ip ??= this.#request.ip;
    return this.#ip;
  }

  /**
   * The app's setting; when it could not be read, 'none' if a forwarded header did not change the address.
   * A getter: only read until every start-up notice has been given.
   */
  get proxyTrust(): ProxyTrust | undefined {
    const request = this.#request;
    const configured =
      this.#trust ?? (request.server === undefined ? undefined : fastifyTrust(request.server));
    if (configured !== undefined) return configured;
    return request.headers['x-forwarded-for'] !== undefined && this.ip === request.socket.remoteAddress
      ? 'none'
      : undefined;
  }

  get proxySetting(): string {
    return "Fastify's trustProxy option (hops or addresses)";
  }

  header(name: string): string | readonly string[] | undefined {
    return this.#request.headers[name];
  }
}

/** What @sluice/fastify reads of a route's config: the route's own fields Fastify adds, and the app's. */
export interface FastifyRouteConfig {
  readonly url?: string;
  readonly method?: string | readonly string[];
  readonly [key: string | symbol]: unknown;
}

/** The symbol Fastify keeps a request's route context under, once found; null when a request had none. */
let contextKey: symbol | null | undefined;

/**
 * A request's route config, as `request.routeOptions.config` gives it (undefined for none). Fastify builds
 * `routeOptions` anew, a dozen fields, on every read: the config is read from the route context Fastify keeps
 * under a symbol instead, and from `routeOptions` when that cannot be found.
 */
export function fastifyRouteConfig(request: {
  readonly routeOptions: { readonly config?: unknown };
}): FastifyRouteConfig | undefined {
  if (contextKey === undefined)
    contextKey =
      Object.getOwnPropertySymbols(request).find((symbol) => symbol.description === 'fastify.context') ??
      null;
  const context =
    contextKey === null
      ? undefined
      : (request as unknown as Record<symbol, { config?: unknown } | undefined>)[contextKey];
  // Fastify gives every route context a config: none found means its internals moved, and the public read
  // keeps a route's own rules in view.
  const config = context?.config ?? request.routeOptions.config;
  return config as FastifyRouteConfig | undefined;
}
