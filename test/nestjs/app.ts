import type { AddressInfo } from 'node:net';
import { Controller, Get, type INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { InlineLimit, Limiter, RuleSpec } from '@sluice/core';
import {
  type RateLimitInfo as Info,
  RateLimit,
  RateLimitInfo,
  SkipRateLimit,
  SluiceModule,
  type SluiceModuleOptions,
  SluiceService,
} from '@sluice/nestjs';
import type { Gate } from '../adapters/apps.js';

/** The two HTTP platforms Nest runs on. */
export type Platform = 'express' | 'fastify';
export const PLATFORMS: readonly Platform[] = ['express', 'fastify'];

/** The app every test serves; each field a way the app differs. */
export interface NestAppSpec {
  readonly platform: Platform;
  /** SluiceModule.forRoot's options; `forRootAsync` with a factory when `async` is set. */
  readonly options: SluiceModuleOptions;
  readonly async?: boolean;
  /** `@RateLimit(...)` on the `/limited` handler. */
  readonly routeRule?: RuleSpec | InlineLimit;
  /** `@RateLimit(...)` on the `/admin/*` controller. */
  readonly controllerRule?: RuleSpec | InlineLimit;
  readonly trustProxy?: boolean;
  readonly gate?: Gate;
  /** Counts handler runs, by path. */
  readonly served?: Map<string, number>;
}

/** A started Nest app: its base URL, its limiter, and how to stop it. */
export interface RunningNestApp {
  readonly url: string;
  readonly app: INestApplication;
  readonly limiter: Limiter;
  close(): Promise<void>;
}

/** The decorator argument for a rule or the shorthand, as a user writes it. */
const routeConfig = (rule: RuleSpec | InlineLimit) =>
  'limit' in rule && typeof rule.limit === 'number' ? (rule as InlineLimit) : { rules: [rule as RuleSpec] };

type Decorator = MethodDecorator | ParameterDecorator;

/**
 * Applies decorators to a handler as the compiler would with experimentalDecorators: these tests compile under the
 * repository's settings, which have none (the decorators, not the syntax, are under test).
 */
function decorate(
  target: abstract new (...args: never[]) => unknown,
  method: string,
  ...decorators: MethodDecorator[]
): void {
  const proto = target.prototype as object;
  const descriptor = Object.getOwnPropertyDescriptor(proto, method);
  if (descriptor === undefined) throw new Error(`no method ${method}`);
  Object.defineProperty(proto, method, Reflect.decorate(decorators, proto, method, descriptor) ?? descriptor);
}

/** Marks parameter `index` of a handler. */
function param(
  target: abstract new (...args: never[]) => unknown,
  method: string,
  index: number,
  decorator: Decorator,
): void {
  (decorator as ParameterDecorator)(target.prototype as object, method, index);
}

/** The controllers of one app, built anew per app: each spec decorates its own classes. */
function controllers(spec: NestAppSpec) {
  const handle = async (path: string) => {
    spec.served?.set(path, (spec.served.get(path) ?? 0) + 1);
    if (path === '/boom') throw new Error('boom');
    if (path === '/slow') await spec.gate?.wait();
    return { ok: true };
  };

  class MainController {
    search() {
      return handle('/search');
    }
    limited() {
      return handle('/limited');
    }
    health() {
      return handle('/health');
    }
    slow() {
      return handle('/slow');
    }
    boom() {
      return handle('/boom');
    }
    smooth() {
      return handle('/smooth');
    }
    critical() {
      return handle('/critical');
    }
    unlimited() {
      return handle('/unlimited');
    }
    info(info: Info | undefined) {
      return info
        ? { rule: info.rule ?? null, limit: info.limit, remaining: info.remaining, resetMs: info.resetMs }
        : null;
    }
  }
  Controller()(MainController);
  for (const name of ['search', 'health', 'slow', 'boom', 'smooth', 'critical', 'info'])
    decorate(MainController, name, Get(name));
  decorate(
    MainController,
    'limited',
    Get('limited'),
    ...(spec.routeRule ? [RateLimit(routeConfig(spec.routeRule))] : []),
  );
  decorate(MainController, 'unlimited', Get('unlimited'), SkipRateLimit());
  param(MainController, 'info', 0, RateLimitInfo());

  class AdminController {
    one() {
      return handle('/admin/one');
    }
    two() {
      return handle('/admin/two');
    }
    open() {
      return handle('/admin/open');
    }
  }
  Controller('admin')(AdminController);
  if (spec.controllerRule) RateLimit(routeConfig(spec.controllerRule))(AdminController);
  decorate(AdminController, 'one', Get('one'));
  decorate(AdminController, 'two', Get('two'));
  decorate(AdminController, 'open', Get('open'), SkipRateLimit());
  return [MainController, AdminController];
}

/** forRootAsync as with a ConfigService: the options from a provider of another module, by an injected token. */
function fromConfig(options: SluiceModuleOptions) {
  const CONFIG = Symbol('config');
  class ConfigModule {}
  Module({ providers: [{ provide: CONFIG, useValue: { rateLimit: options } }], exports: [CONFIG] })(
    ConfigModule,
  );
  return SluiceModule.forRootAsync({
    imports: [ConfigModule],
    inject: [CONFIG],
    useFactory: async (config: { rateLimit: SluiceModuleOptions }) => config.rateLimit,
  });
}

/** Builds, starts and listens on 127.0.0.1 an app of the spec. */
export async function startNest(spec: NestAppSpec): Promise<RunningNestApp> {
  const sluice = spec.async ? fromConfig(spec.options) : SluiceModule.forRoot(spec.options);
  class AppModule {}
  Module({ imports: [sluice], controllers: controllers(spec) })(AppModule);
  const adapter =
    spec.platform === 'fastify'
      ? new FastifyAdapter({ trustProxy: spec.trustProxy ?? false })
      : new ExpressAdapter();
  const app = await NestFactory.create(AppModule, adapter, { logger: false, abortOnError: false });
  if (spec.platform === 'express')
    app
      .getHttpAdapter()
      .getInstance()
      .set('trust proxy', spec.trustProxy ?? false);
  try {
    await app.listen(0, '127.0.0.1');
  } catch (error) {
    await app.close();
    throw error;
  }
  const { port } = app.getHttpServer().address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    app,
    limiter: app.get(SluiceService).limiter,
    close: () => app.close(),
  };
}
