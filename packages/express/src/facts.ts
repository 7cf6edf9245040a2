import type { RequestFacts } from '@sluice/core/http';
import { type ProxyTrust, settingTrust } from '@sluice/core/http';

/**
 * What the limiter reads of an Express request (@sluice/express, and NestJS on @nestjs/platform-express): the
 * fields of Express's own `Request` it needs, so core imports no framework.
 */
export interface ExpressRequestFields {
  readonly ip?: string | undefined;
  readonly method: string;
  readonly originalUrl: string;
  readonly baseUrl?: string;
  readonly route?: { readonly path?: unknown };
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly app: { enabled(setting: string): boolean; get(setting: string): unknown };
  readonly socket: { readonly remoteAddress?: string | undefined };
}

/**
 * Express's 'trust proxy' as the proxy notices read it: core's `settingTrust`, except that a hop count of 0
 * reads as bounded (as @sluice/express always has: no notice for it).
 */
export function expressTrust(setting: unknown): ProxyTrust {
  return setting === 0 ? 'bounded' : settingTrust(setting);
}

/**
 * What the limiter reads off an Express request; a class, so no closure is made per request. Only the address
 * is read at once (every rule set but the smallest keys by it); the rest when a rule or a notice reads it:
 * each property read on an Express request goes through its per-request prototype.
 */
export class ExpressFacts implements RequestFacts {
  readonly ip: string | undefined;
  readonly #req: ExpressRequestFields;
  readonly #template: string | undefined;
  /** The app's 'trust proxy', read once per request. */
  readonly #trust: unknown;

  /** `template`: the route found for the request before Express routed it; else the route it was routed to. */
  constructor(req: ExpressRequestFields, template?: string) {
    this.#req = req;
    this.#template = template;
    this.#trust = req.app.get('trust proxy');
    this.ip = clientIp(req, this.#trust);
  }

  get method(): string {
    return this.#req.method;
  }

  get url(): string {
    return this.#req.originalUrl;
  }

  get route(): string | undefined {
    if (this.#template !== undefined) return this.#template;
    const path = this.#req.route?.path;
    return typeof path === 'string' ? `${this.#req.baseUrl ?? ''}${path}` : undefined;
  }

  get caseSensitive(): boolean {
    return this.#req.app.enabled('case sensitive routing');
  }

  /** Only read until every start-up notice has been given. */
  get proxyTrust(): ProxyTrust {
    return expressTrust(this.#trust);
  }

  get proxySetting(): string {
    return "Express's app.set('trust proxy', hops or addresses)";
  }

  header(name: string): string | readonly string[] | undefined {
    return this.#req.headers[name];
  }
}

/**
 * `req.ip`, read as Express computes it: with 'trust proxy' off (false, Express's default) its proxy-addr walk
 * ends at the socket's address, which is read here without the walk (a few microseconds per request).
 */
function clientIp(req: ExpressRequestFields, trust: unknown): string | undefined {
  if (trust === false) return req.socket.remoteAddress;
  return req.ip ?? req.socket.remoteAddress;
}
