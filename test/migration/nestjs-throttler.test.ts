/** MIGRATING.md, @nestjs/throttler: every claim of its section, run against @nestjs/throttler itself. */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  Controller,
  type DynamicModule,
  Get,
  type INestApplication,
  Module,
  type Provider,
} from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import { ThrottlerGuard, ThrottlerModule } from '@nestjs/throttler';
import { SluiceModule } from '@sluice/nestjs';
import { afterEach, describe, expect, it } from 'vitest';
import { firstDenial, headerOf, quiet, send, statuses } from './support.js';

const apps: INestApplication[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

/** A Nest app of one GET / behind `imports` (and `providers`), decorated as `@Module` and `@Controller` would. */
async function start(imports: DynamicModule[], providers: Provider[] = []): Promise<string> {
  class Hello {
    hello() {
      return { ok: true };
    }
  }
  Controller()(Hello);
  const method = Object.getOwnPropertyDescriptor(Hello.prototype, 'hello') as PropertyDescriptor;
  Get('/')(Hello.prototype, 'hello', method);
  class AppModule {}
  Module({ imports, providers, controllers: [Hello] })(AppModule);
  const app = await NestFactory.create(AppModule, { logger: false });
  apps.push(app);
  await app.listen(0, '127.0.0.1');
  const { port } = (app.getHttpServer() as Server).address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}

describe('@nestjs/throttler -> @sluice/nestjs', () => {
  it("the same first 429, the same X-RateLimit-Limit/-Remaining and Retry-After; its X-RateLimit-Reset counts seconds, Sluice's legacy is a Unix time", async () => {
    const [a, b] = await Promise.all([
      start(
        [ThrottlerModule.forRoot([{ ttl: 60_000, limit: 3 }])],
        [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
      ),
      start([
        SluiceModule.forRoot({
          logger: quiet,
          limit: 3,
          per: '1m',
          algorithm: 'first_request_window',
          headers: 'legacy',
        }),
      ]),
    ]);
    const [before, after] = await Promise.all([send(a, 5), send(b, 5)]);
    expect(statuses(before)).toEqual([200, 200, 200, 429, 429]);
    expect(statuses(after)).toEqual(statuses(before));
    for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining'])
      expect(headerOf(after.slice(0, 3), name)).toEqual(headerOf(before.slice(0, 3), name));
    expect(firstDenial(before).headers['retry-after']).toBe('60');
    expect(firstDenial(after).headers['retry-after']).toBe('60');
    expect(before[0]?.headers['x-ratelimit-reset']).toBe('60');
    const unix = Number(after[0]?.headers['x-ratelimit-reset']);
    expect(Math.abs(unix - (Date.now() / 1000 + 60))).toBeLessThanOrEqual(2);
  });
});
