import { Controller, Get, Module, Query, Req } from '@nestjs/common';
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
import { accountDescriptors, accountOf, RULES_PATH } from '../public-api/accounts.js';
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

  account(req: SluiceRequest, info: Info | undefined) {
    const account = accountOf(req.headers);
    return account
      ? { tenant: account.tenant, remaining: info?.remaining ?? null }
      : { error: 'send a valid x-api-key (try k_demo)' };
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

const app = await NestFactory.create<NestExpressApplication>(AppModule, new ExpressAdapter());
app.set('trust proxy', process.env.TRUST_PROXY === '1');
app.enableShutdownHooks(); // SIGINT/SIGTERM close the app, and with it the limiter
const host = process.env.HOST ?? '127.0.0.1';
await app.listen(Number(process.env.PORT ?? 3000), host);
console.log(`nestjs example listening on ${await app.getUrl()}`);
process.once('beforeExit', () => void redis.close());
