import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, Reflector } from '@nestjs/core';
import { ConfigError, type Limiter } from '@sluice/core';
import {
  ALL_RULES,
  type CheckScope,
  createHttpLimiter,
  type HttpLimiter,
  type RateLimitOptions,
  RouteScopes,
} from '@sluice/core/http';
import type { RateLimitMetadata } from './decorators.js';
import { ownerLabel, ruleNameOf } from './names.js';
import type { SluiceModuleOptions, SluiceRequest } from './options.js';
import { RATE_LIMIT_METADATA, SLUICE_OPTIONS } from './tokens.js';

// The other adapters' onDenied sends a denial itself; in Nest an exception filter does, after the guard throws.
const ON_DENIED =
  'invalid rate limit options: "onDenied" is not a SluiceModule option: catch RateLimitException in an ' +
  'exception filter (@Catch(RateLimitException)) to send your own denial';

/** A controller class or one of its handlers: where `@RateLimit` metadata lives. */
type Target = abstract new (...args: never[]) => unknown;

/**
 * The limiter of a Nest application, built once from the module's options. Compiles every controller's and
 * handler's `@RateLimit` when the module starts, so a wrong route rule fails `app.init()`; closes the limiter
 * (and its stores) when the application shuts down. Inject it to reach the limiter (reload rules, explain).
 */
export class SluiceService implements OnModuleInit, OnApplicationShutdown {
  readonly http: HttpLimiter<SluiceRequest, RateLimitOptions<SluiceRequest>>;
  /** Each `@RateLimit` config's scope: a config shared by two handlers shares its rules and counters. */
  readonly #scopes: RouteScopes;
  readonly #discovery: DiscoveryService;
  readonly #reflector: Reflector;

  constructor(options: SluiceModuleOptions, discovery: DiscoveryService, reflector: Reflector) {
    if (typeof options === 'object' && options !== null && 'onDenied' in options)
      throw new ConfigError(ON_DENIED);
    this.http = createHttpLimiter<SluiceRequest, RateLimitOptions<SluiceRequest>>(options);
    this.#scopes = new RouteScopes(this.http, (controller, handler) => ({
      label: `@RateLimit on ${ownerLabel(controller, handler)}`,
      rule: ruleNameOf(controller, handler),
    }));
    this.#discovery = discovery;
    this.#reflector = reflector;
  }

  /** The limiter behind the guard. */
  get limiter(): Limiter {
    return this.http.limiter;
  }

  onModuleInit(): void {
    for (const wrapper of this.#discovery.getControllers()) {
      const controller = wrapper.metatype as Target | null | undefined;
      if (typeof controller !== 'function') continue;
      this.#compile(this.#reflector.get<RateLimitMetadata>(RATE_LIMIT_METADATA, controller), controller.name);
      for (const [name, handler] of handlersOf(controller)) {
        const config = this.#reflector.get<RateLimitMetadata>(RATE_LIMIT_METADATA, handler);
        this.#compile(config, controller.name, name);
      }
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.http.limiter.close();
  }

  /**
   * The scope of a request to a handler whose nearest metadata is `config`: every rule when there is none,
   * undefined when skipped. Rules compiled at start-up; a controller the module did not see (another module
   * tree) has its rules compiled here, a wrong config reported and only the global rules checked.
   */
  scopeOf(
    config: RateLimitMetadata | undefined,
    controller: string,
    handler: string,
  ): CheckScope | undefined {
    if (config === false) return undefined;
    return config === undefined ? ALL_RULES : this.#scopes.scopeOf(config, controller, handler);
  }

  /** Compiles a config once; throws ConfigError/RulesError naming the controller or handler. */
  #compile(config: RateLimitMetadata | undefined, controller: string, handler?: string): void {
    if (config !== undefined && config !== false) this.#scopes.compile(config, controller, handler);
  }
}

/** A controller's handlers: the functions on its prototype chain, by name. */
function handlersOf(controller: Target): Map<string, Target> {
  const found = new Map<string, Target>();
  for (let proto = controller.prototype as object | null; proto !== null && proto !== Object.prototype; ) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const value = Object.getOwnPropertyDescriptor(proto, name)?.value as unknown;
      if (name !== 'constructor' && typeof value === 'function' && !found.has(name))
        found.set(name, value as Target);
    }
    proto = Object.getPrototypeOf(proto) as object | null;
  }
  return found;
}

// Decorators applied as calls: this package compiles without experimentalDecorators or emitted metadata.
Injectable()(SluiceService);
Inject(SLUICE_OPTIONS)(SluiceService, undefined, 0);
Inject(DiscoveryService)(SluiceService, undefined, 1);
Inject(Reflector)(SluiceService, undefined, 2);
