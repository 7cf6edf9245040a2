import { type DynamicModule, Module, type Provider } from '@nestjs/common';
import { APP_GUARD, DiscoveryModule } from '@nestjs/core';
import { SluiceGuard } from './guard.js';
import type { SluiceModuleAsyncOptions, SluiceModuleOptions } from './options.js';
import { SluiceService } from './service.js';
import { SLUICE_OPTIONS } from './tokens.js';

/** Everything but the options: the limiter (built when the application starts) and the global guard. */
function sluiceModule(options: Provider, imports: DynamicModule['imports'] = []): DynamicModule {
  return {
    module: SluiceModule,
    global: true,
    imports: [DiscoveryModule, ...imports],
    providers: [options, SluiceService, { provide: APP_GUARD, useClass: SluiceGuard }],
    exports: [SluiceService],
  };
}

/** Rate limiting for a Nest application: a global guard deciding every HTTP request. */
// biome-ignore lint/complexity/noStaticOnlyClass: a Nest module is a class; forRoot and forRootAsync are its convention.
export class SluiceModule {
  /** Options given directly: `SluiceModule.forRoot({rules: 'rules.yaml', store})`. */
  static forRoot(options: SluiceModuleOptions = {}): DynamicModule {
    return sluiceModule({ provide: SLUICE_OPTIONS, useValue: options });
  }

  /** Options from a factory: `forRootAsync({imports: [ConfigModule], inject: [ConfigService], useFactory})`. */
  static forRootAsync(async: SluiceModuleAsyncOptions): DynamicModule {
    const options: Provider = {
      provide: SLUICE_OPTIONS,
      useFactory: async.useFactory as (...args: unknown[]) => SluiceModuleOptions,
      inject: [...(async.inject ?? [])],
    };
    return sluiceModule(options, async.imports);
  }
}

Module({})(SluiceModule);
