import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type ArgumentsHost,
  Catch,
  Controller,
  type ExceptionFilter,
  Get,
  type HttpServer,
  type INestApplication,
  type MiddlewareConsumer,
  Module,
  Post,
  Res,
  type Type,
} from '@nestjs/common';
import { BaseExceptionFilter, NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { InlineLimit, Limiter, RuleSpec } from '@sluice/core';
import {
  type RateLimitInfo as Info,
  RateLimit,
  RateLimitException,
  RateLimitInfo,
  SkipRateLimit,
  SluiceModule,
  type SluiceModuleOptions,
  SluiceService,
} from '@sluice/nestjs';
import { type AdapterFactory, type AppSpec, EARLY, handle, infoBody } from './app-spec.js';

/** The two HTTP platforms Nest runs on. */
export type Platform = 'express' | 'fastify';
export const PLATFORMS: readonly Platform[] = ['express', 'fastify'];

/** The contract app's spec, on one platform, with what only Nest has. */
export interface NestAppSpec extends Omit<AppSpec, 'options'> {
  readonly platform: Platform;
  /** SluiceModule.forRoot's options; `forRootAsync` with a factory when `async` is set. */
  readonly options: SluiceModuleOptions;
  readonly async?: boolean;
  /** `@RateLimit(...)` on the `/admin/*` controller. */
  readonly controllerRule?: RuleSpec | InlineLimit;
}

/** A started Nest app: its base URL, its limiter, and how to stop it. */
export interface RunningNestApp {
  readonly url: string;
  readonly server: Server;
  readonly app: INestApplication;
  readonly limiter: Limiter;
  close(): Promise<void>;
}

/** The decorator argument for a rule or the shorthand, as a user writes it. */
const routeConfig = (rule: RuleSpec | InlineLimit) =>
  'limit' in rule && typeof rule.limit === 'number' ? (rule as InlineLimit) : { rules: [rule as RuleSpec] };

type Target = Type;

/**
 * Applies decorators to a handler as the compiler would with experimentalDecorators: these tests compile under the
 * repository's settings, which have none (the decorators, not the syntax, are under test).
 */
function decorate(target: Target, method: string, ...decorators: MethodDecorator[]): void {
  const proto = target.prototype as object;
  const descriptor = Object.getOwnPropertyDescriptor(proto, method);
  if (descriptor === undefined) throw new Error(`no method ${method}`);
  Object.defineProperty(proto, method, Reflect.decorate(decorators, proto, method, descriptor) ?? descriptor);
}

/** The contract app's handlers by method name, with the path each serves. */
const MAIN_ROUTES: Readonly<Record<string, string>> = {
  search: '/search',
  limited: '/limited',
  health: '/health',
  critical: '/critical',
  smooth: '/smooth',
  user: '/users/:id',
  slow: '/slow',
  boom: '/boom',
  unlimited: '/unlimited',
};

/** The controllers of one app, built anew per app: each spec decorates its own classes. */
function controllers(spec: NestAppSpec, http: () => HttpServer): Target[] {
  /** Adds a handler named `method` serving `path` (the name makes the shorthand's rule name). */
  const handler = (target: Target, method: string, path: string) => {
    const value = { [method]: () => handle(spec, path) }[method];
    Object.defineProperty(target.prototype, method, { value, writable: true, configurable: true });
  };
  /**
   * The handler of the path an earlier middleware answers: Nest would reply with a handler's result over the
   * answer sent, so it replies itself (`@Res()`), unless sent, as the other apps' handlers check `headersSent`.
   */
  const replyingItself = (target: Target, method: string, path: string) => {
    const value = {
      [method]: async (res: object) => {
        const body = await handle(spec, path);
        if (!http().isHeadersSent(res)) http().reply(res, body, 200);
      },
    }[method];
    Object.defineProperty(target.prototype, method, { value, writable: true, configurable: true });
    Res()(target.prototype as object, method, 0);
  };
  class MainController {
    info(info: Info | undefined) {
      return infoBody(info);
    }
  }
  for (const [method, path] of Object.entries(MAIN_ROUTES))
    (path === spec.sendsFirst ? replyingItself : handler)(MainController, method, path);
  Controller()(MainController);
  for (const [method, path] of Object.entries(MAIN_ROUTES)) {
    const own =
      method === 'limited' && spec.routeRule
        ? [RateLimit(routeConfig(spec.routeRule))]
        : method === 'unlimited'
          ? [SkipRateLimit()]
          : [];
    decorate(MainController, method, Get(path.slice(1)), ...own);
  }
  decorate(MainController, 'info', Get('info'));
  if (spec.batchRule !== undefined) {
    handler(MainController, 'batch', '/batch');
    decorate(MainController, 'batch', Post('batch'), RateLimit({ rules: [spec.batchRule], afterBody: true }));
  }
  RateLimitInfo()(MainController.prototype, 'info', 0);

  class AdminController {}
  for (const method of ['one', 'two', 'open']) handler(AdminController, method, `/admin/${method}`);
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

/**
 * Nest's way of the spec's `customDenial` and `errors`: an exception filter. A denial is a RateLimitException
 * (answered 418 when the spec asks), anything else an error the framework handles (500 by Nest's default).
 */
function denialFilter(app: INestApplication, spec: NestAppSpec): ExceptionFilter {
  class SpecFilter extends BaseExceptionFilter {
    override catch(exception: unknown, host: ArgumentsHost): void {
      const { customDenial } = spec;
      if (!(exception instanceof RateLimitException)) spec.errors?.push(exception);
      else if (customDenial !== undefined) {
        const adapter = app.getHttpAdapter();
        const res = host.switchToHttp().getResponse<object>();
        adapter.setHeader(res, 'x-ratelimit-rule', exception.denied.body.rule ?? '');
        adapter.reply(res, customDenial, 418);
        return;
      }
      super.catch(exception, host);
    }
  }
  Catch()(SpecFilter);
  return new SpecFilter(app.getHttpAdapter());
}

/** Nest middleware (it runs before guards, on either platform) answering `path` first and passing it on. */
function answeringFirst(path: string) {
  return (req: IncomingMessage & { originalUrl?: string }, res: ServerResponse, next: () => void) => {
    if ((req.originalUrl ?? req.url) === path) res.setHeader('content-type', 'application/json').end(EARLY);
    next();
  };
}

/** Builds, starts and listens on 127.0.0.1 an app of the spec. */
export async function startNest(spec: NestAppSpec): Promise<RunningNestApp> {
  const { batchCost } = spec;
  // Nest parses the body before guards run, on either platform.
  const options: SluiceModuleOptions =
    batchCost === undefined ? spec.options : { ...spec.options, cost: (req) => batchCost(req.body) };
  const sluice = spec.async ? fromConfig(options) : SluiceModule.forRoot(options);
  class AppModule {
    configure(consumer: MiddlewareConsumer): void {
      if (spec.sendsFirst !== undefined) consumer.apply(answeringFirst(spec.sendsFirst)).forRoutes('*path');
    }
  }
  let app: INestApplication | undefined;
  const http = () => (app as INestApplication).getHttpAdapter();
  Module({ imports: [sluice], controllers: controllers(spec, http) })(AppModule);
  const adapter =
    spec.platform === 'fastify'
      ? new FastifyAdapter({ trustProxy: spec.trustProxy ?? false })
      : new ExpressAdapter();
  app = await NestFactory.create(AppModule, adapter, { logger: false, abortOnError: false });
  if (spec.platform === 'express')
    app
      .getHttpAdapter()
      .getInstance()
      .set('trust proxy', spec.trustProxy ?? false);
  if (spec.customDenial !== undefined || spec.errors !== undefined)
    app.useGlobalFilters(denialFilter(app, spec));
  try {
    await app.listen(0, '127.0.0.1');
  } catch (error) {
    await app.close();
    throw error;
  }
  const server = app.getHttpServer() as Server;
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    app,
    limiter: app.get(SluiceService).limiter,
    close: () => app.close(),
  };
}

/** Guards run after routing: what a Nest app cannot do of the contract, each with why. */
const NEST_SKIPS = {
  unmatchedRoutes:
    'a Nest guard runs only for a matched handler: a request no route matches (404) is never limited',
  onDeniedOption:
    'SluiceModule refuses onDenied: an exception filter catching RateLimitException sends a custom denial',
} as const;

/** The contract app on Nest, one platform. */
function nestFactory(platform: Platform): AdapterFactory {
  return {
    name: `nestjs-${platform}`,
    traits: { routeShorthandName: 'main_controller_limited' },
    skips: NEST_SKIPS,
    start: (spec) => startNest({ ...spec, platform }),
  };
}

/** Nest on Express and on Fastify. */
export const nestAdapters: readonly AdapterFactory[] = PLATFORMS.map(nestFactory);
