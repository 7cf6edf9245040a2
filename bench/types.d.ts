/** Minimal types for the bench's untyped dependencies. */

declare module 'koa-ratelimit' {
  import type { Context, Middleware } from 'koa';

  interface KoaRateLimitOptions {
    driver: 'redis' | 'memory';
    db: unknown;
    duration: number;
    max: number;
    id: (ctx: Context) => string | false;
  }
  export default function ratelimit(options: KoaRateLimitOptions): Middleware;
}

declare module 'autocannon' {
  interface Histogram {
    average: number;
    mean: number;
    p50: number;
    p99: number;
    total: number;
  }
  interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    setupRequest?: (request: Request, context: Record<string, unknown>) => Request;
  }
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    overallRate?: number;
    pipelining?: number;
    requests?: Request[];
  }
  interface Result {
    /** Seconds actually run. */
    duration: number;
    requests: Histogram;
    latency: Histogram;
    non2xx: number;
    errors: number;
    timeouts: number;
    '2xx': number;
  }
  export default function autocannon(options: Options): Promise<Result>;
}
