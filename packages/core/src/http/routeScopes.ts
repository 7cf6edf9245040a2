import type { CompiledRules } from '../rules/contract.js';
import { ALL_RULES, type CheckScope } from './notes.js';
import type { AdapterStage } from './options.js';

/** What a route's config is called in errors, and the default name of its shorthand's rule. */
export interface RouteNaming {
  readonly label: string;
  readonly rule: string;
}

/** What the cache needs of the HTTP limiter. */
interface RouteCompiler {
  compileRouteConfig(config: unknown, label: string, defaultName: string): CompiledRules;
  report(error: unknown, stage: AdapterStage): void;
}

/**
 * Route scopes by their config object (`config.rateLimit`, a `@RateLimit` decorator), each compiled
 * once: a config shared by two routes (a GET route and its HEAD twin) shares its rules and counters. `naming`
 * names a route from two parts (method and URL, controller and handler), only when it is compiled.
 */
export class RouteScopes {
  readonly #scopes = new WeakMap<object, CheckScope>();
  readonly #http: RouteCompiler;
  readonly #naming: (first: string, second?: string) => RouteNaming;

  constructor(http: RouteCompiler, naming: (first: string, second?: string) => RouteNaming) {
    this.#http = http;
    this.#naming = naming;
  }

  /** Compiles a config at registration, once; throws ConfigError/RulesError naming the route. */
  compile(config: unknown, first: string, second?: string): CheckScope {
    const known = typeof config === 'object' && config !== null ? this.#scopes.get(config) : undefined;
    if (known !== undefined) return known;
    const { label, rule } = this.#naming(first, second);
    const scope = { rules: this.#http.compileRouteConfig(config, label, rule) };
    this.#scopes.set(config as object, scope);
    return scope;
  }

  /**
   * A request's scope: compiled at registration, unless the route was not seen then (a route declared
   * before the plugin loaded, a controller of another module tree): compiled now, and a wrong config
   * reported, leaving the global rules only.
   */
  scopeOf(config: unknown, first: string, second?: string): CheckScope {
    const known = this.#scopes.get(config as object);
    if (known !== undefined) return known;
    let scope: CheckScope = ALL_RULES;
    try {
      scope = this.compile(config, first, second);
    } catch (error) {
      this.#http.report(error, 'check');
    }
    // A config that is not an object cannot be remembered (nor compiled): it is reported on each request.
    if (typeof config === 'object' && config !== null) this.#scopes.set(config, scope);
    return scope;
  }
}
