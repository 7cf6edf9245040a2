import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  Body,
  Controller,
  Get,
  Header,
  HttpCode,
  HttpException,
  Module,
  Post,
  Query,
  Req,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express';
import {
  type RateLimitInfo as Info,
  RateLimit,
  RateLimitInfo,
  SkipRateLimit,
  SluiceModule,
  type SluiceRequest,
} from '@sluice/nestjs';
import { accountDescriptors, accountOf, exportDuration, RULES_PATH } from '../public-api/accounts.js';
import { failedToListen, listenAddress } from '../public-api/listen.js';
import { storeFromEnv } from '../public-api/store.js';

// The public-api example's rules, served by Nest on Express. In your app, write the decorators as decorators
// (`@Controller()`, `@Get('search')`, `@RateLimit({...})`: see packages/nestjs/README.md). Here they are applied
// as calls, so that this file runs with plain `npx tsx examples/nestjs/server.ts` and type-checks under this
// repository's settings, which have no `experimentalDecorators`.

class ApiController {
  health() {
    return { ok: true };
  }

  search(q: unknown) {
    const query = typeof q === 'string' ? q : '';
    return { query, results: [`${query} one`, `${query} two`] };
  }

  async export(seconds: unknown) {
    await sleep(exportDuration({ seconds }));
    return 'id,name\n1,alpha\n2,beta\n';
  }

  login(body: { user?: string; password?: string } | undefined) {
    if (body?.user === 'demo' && body.password === 'demo') return { ok: true };
    throw new HttpException({ error: 'wrong user or password' }, 401);
  }

  account(req: SluiceRequest, info: Info | undefined) {
    const account = accountOf(req.headers);
    if (!account) throw new HttpException({ error: 'send a valid x-api-key (try k_demo)' }, 401);
    return { tenant: account.tenant, remaining: info?.remaining ?? null };
  }
}

/** `@decorators` on a method, as TypeScript's experimentalDecorators would apply them. */
function decorate(method: keyof ApiController, ...decorators: MethodDecorator[]): void {
  const proto = ApiController.prototype;
  const descriptor = Object.getOwnPropertyDescriptor(proto, method) as PropertyDescriptor;
  Object.defineProperty(proto, method, Reflect.decorate(decorators, proto, method, descriptor) ?? descriptor);
}

Controller()(ApiController);
// @Get('health') @SkipRateLimit(): never limited, not even by the global rules.
decorate('health', Get('health'), SkipRateLimit());
// @Get('search') @RateLimit({...}): ten searches a second per client IP, on top of the global rules, in one call.
decorate(
  'search',
  Get('search'),
  RateLimit({ rules: [{ name: 'search_burst', key: ['ip'], limit: { requests: 10, per: '1s' } }] }),
);
Query('q')(ApiController.prototype, 'search', 0);
// @Get('export') @Header('content-type', 'text/csv'): export_concurrency holds a lease until the response ends.
decorate('export', Get('export'), Header('content-type', 'text/csv'));
Query('seconds')(ApiController.prototype, 'export', 0);
// @Post('login') @HttpCode(200): login_per_ip, five an hour per IP.
decorate('login', Post('login'), HttpCode(200));
Body()(ApiController.prototype, 'login', 0);
// @Get('account') account(@Req() req, @RateLimitInfo() info): the handler reads its own limit.
decorate('account', Get('account'));
Req()(ApiController.prototype, 'account', 0);
RateLimitInfo()(ApiController.prototype, 'account', 1);

const redis = await storeFromEnv();

class AppModule {}
Module({
  imports: [
    // forRootAsync({imports: [ConfigModule], inject: [ConfigService], useFactory: (config) => ({...})}) reads
    // the same options from your configuration instead.
    SluiceModule.forRoot({
      rules: RULES_PATH,
      ...(redis.store ? { store: redis.store } : {}),
      descriptors: accountDescriptors,
      // Only the example's real keys count as keys: a made-up x-api-key is anonymous, limited per IP.
      validateApiKey: (_key, req) => accountOf(req.headers) !== undefined,
    }),
  ],
  controllers: [ApiController],
})(AppModule);

// Warnings and errors only: one line at start, as the other examples print, not Nest's route map.
const app = await NestFactory.create<NestExpressApplication>(AppModule, new ExpressAdapter(), {
  logger: ['error', 'warn'],
});
app.set('trust proxy', process.env.TRUST_PROXY === '1');
app.enableShutdownHooks(); // SIGINT/SIGTERM close the app, and with it the limiter
process.once('beforeExit', () => void redis.close());
// app.listen() would log a listening error with a stack trace: the example listens on the app's server itself.
await app.init();
const where = listenAddress();
const server = app.getHttpServer() as Server;
server.once('error', (error) => {
  failedToListen('nestjs example', error, where, 'npx tsx examples/nestjs/server.ts');
  void app.close();
});
server.listen(where.port, where.host, () => {
  const { port } = server.address() as AddressInfo;
  console.log(`nestjs example listening on http://${where.host}:${port}`);
});
