import type { ProxyTrust, RequestFacts } from '@sluice/core/http';

/**
 * What the limiter reads of a Koa context (@sluice/koa): the fields of Koa's own `Context` it needs, so core
 * imports no framework.
 */
export interface KoaContextFields {
  readonly ip: string;
  readonly method: string;
  readonly originalUrl: string;
  /** The template @koa/router matched, once it has run. */
  readonly _matchedRoute?: unknown;
  readonly app: { readonly proxy: boolean; readonly maxIpsCount: number };
  readonly req: { readonly headers: Readonly<Record<string, string | string[] | undefined>> };
}

/**
 * What the limiter reads off a Koa context; a class, so no closure is made per request. Each field when a rule
 * or a notice reads it: each goes through Koa's delegates, and the address through its proxy headers too.
 */
export class KoaFacts implements RequestFacts {
  readonly #ctx: KoaContextFields;
  readonly #template: string | undefined;
  #ip: string | undefined;

  /** `template`: the route the global middleware found for the request, before the router ran. */
  constructor(ctx: KoaContextFields, template: string | undefined) {
    this.#ctx = ctx;
    this.#template = template;
  }

  get ip(): string {
    this.#ip ??= this.#ctx.ip;
    return this.#ip;
  }

  get method(): string {
    return this.#ctx.method;
  }

  get url(): string {
    return this.#ctx.originalUrl;
  }

  get route(): string | undefined {
    const matched: unknown = this.#template ?? this.#ctx._matchedRoute;
    return typeof matched === 'string' ? matched : undefined;
  }

  /** Only read until every start-up notice has been given. */
  get proxyTrust(): ProxyTrust {
    const { app } = this.#ctx;
    // Koa with app.proxy and no maxIpsCount takes the leftmost X-Forwarded-For entry, which the client writes.
    return !app.proxy ? 'none' : app.maxIpsCount > 0 ? 'bounded' : 'all';
  }

  get proxySetting(): string {
    return "Koa's app.proxy, with app.maxIpsCount to read only your proxies' hops";
  }

  header(name: string): string | readonly string[] | undefined {
    return this.#ctx.req.headers[name];
  }
}
