/**
 * What an adapter hands core about a request, in its own file: descriptors.ts builds from it and proxy.ts
 * reads its trust, and neither needs the other for it.
 */

/** How far the app trusts X-Forwarded-For: not at all, a bounded number of hops or list of proxies, or entirely. */
export type ProxyTrust = 'none' | 'bounded' | 'all';

/** What an adapter reads off a request, framework-neutral. */
export interface RequestFacts {
  /** The framework's trusted client address (proxy headers only when the app trusts proxies). */
  readonly ip: string | undefined;
  readonly method: string;
  /** The raw request target (`req.url`), used when no route template is known. */
  readonly url: string;
  /** The route template (`/users/:id`) when the framework knows it. */
  readonly route?: string;
  /** Overrides the configured case sensitivity when the framework knows its router's. */
  readonly caseSensitive?: boolean;
  /** How the framework trusts proxies, for start-up smells only; undefined when unknown. */
  readonly proxyTrust?: ProxyTrust;
  /** Where the framework sets that trust (its own option or setting), named by the proxy notices. */
  readonly proxySetting?: string;
  /** A request header by lower-case name. */
  header(name: string): string | readonly string[] | undefined;
}
