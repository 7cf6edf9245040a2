import type { IncomingHttpHeaders } from 'node:http';
import type { ModuleMetadata } from '@nestjs/common';
import type { RateLimitInfo, RateLimitOptions } from '@sluice/core/http';

/**
 * What the options' functions (`skip`, `descriptors`, `apiKey`, `cost`) receive: the platform's request, an
 * Express `Request` on @nestjs/platform-express, a `FastifyRequest` on @nestjs/platform-fastify.
 */
export interface SluiceRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly ip?: string | undefined;
  /** The parsed body: both platforms parse it before guards run. */
  readonly body?: unknown;
  /** This request's limit as its RateLimit headers show it (set by the guard). */
  rateLimit?: RateLimitInfo;
}

/** Options of `SluiceModule.forRoot`: the options every Sluice adapter takes. */
export type SluiceModuleOptions = RateLimitOptions<SluiceRequest>;

/** Options of `SluiceModule.forRootAsync`: a factory (a ConfigService's, say) that gives the options. */
export interface SluiceModuleAsyncOptions {
  /** Modules whose providers the factory needs (`ConfigModule`). */
  readonly imports?: ModuleMetadata['imports'];
  /** Providers handed to `useFactory`, in order (`ConfigService`). */
  readonly inject?: readonly (string | symbol | (abstract new (...args: never[]) => unknown))[];
  /** Builds the options; may be async. */
  useFactory(...args: never[]): SluiceModuleOptions | Promise<SluiceModuleOptions>;
}
