import { once } from 'node:events';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { InlineLimit, Limiter, RateLimitInfo, RateLimitOptions, RuleSpec } from '@sluice/core';
import { it } from 'vitest';

// What every contract app shares, whatever its framework: the spec, the routes' handler, the adapter factory.
// The apps themselves are in apps.ts (Fastify, Express, Koa), hono-app.ts and nest-app.ts.

/** What each test app's request looks like to the shared option functions (true of every framework's). */
export interface AnyRequest {
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
}

/** Holds `/slow` handlers until the test lets them go. */
export class Gate {
  entered = 0;
  #waiting: (() => void)[] = [];

  wait(): Promise<void> {
    this.entered += 1;
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  openAll(): void {
    for (const resolve of this.#waiting.splice(0)) resolve();
  }
}

/** The app every adapter serves, the same routes everywhere. */
export interface AppSpec {
  readonly options: RateLimitOptions<AnyRequest>;
  /** A rule (or the shorthand) for `/limited` only, given the framework's per-route way. */
  readonly routeRule?: RuleSpec | InlineLimit;
  readonly trustProxy?: boolean;
  readonly gate?: Gate;
  /** When set, `onDenied` answers 418 with this text and the rule header, each framework its own way. */
  readonly customDenial?: string;
  /** Counts handler runs, by path. */
  readonly served?: Map<string, number>;
  /** A path an earlier middleware answers (200 `{"early":true}`) before the limiter runs, passing it on. */
  readonly sendsFirst?: string;
  /** Collects errors that reach the framework's error handling. */
  readonly errors?: unknown[];
  /**
   * A POST `/batch` route taking JSON, with this route rule and `afterBody: true`; `batchCost` is then
   * `cost(req)`, handed the body the framework parsed (its own way).
   */
  readonly batchRule?: RuleSpec;
  readonly batchCost?: (body: unknown) => number | undefined;
}

export const EARLY = JSON.stringify({ early: true });

/** What `/info` answers: the limit the handler read, each framework its own typed way. */
export function infoBody(info: RateLimitInfo | undefined) {
  return info
    ? { rule: info.rule ?? null, limit: info.limit, remaining: info.remaining, resetMs: info.resetMs }
    : null;
}

/** A started app: its base URL, its limiter, and how to stop it. */
export interface RunningApp {
  readonly url: string;
  readonly server: Server;
  readonly limiter: Limiter;
  close(): Promise<void>;
}

/** What a framework does its own way, which the suites expect of it. */
export interface AdapterTraits {
  /** The name of the rule the route shorthand makes for `/limited`. */
  readonly routeShorthandName: string;
}

/** The contract cases an adapter may opt out of, when its framework genuinely cannot meet them. */
export type ContractCase = 'unmatchedRoutes' | 'onDeniedOption';

/** One adapter: a name, its traits, the cases it cannot meet (each with why) and how to start the spec's app. */
export interface AdapterFactory {
  readonly name: string;
  readonly traits: AdapterTraits;
  /** Cases skipped for this adapter, by case, each with the reason (shown in the skipped test's title). */
  readonly skips?: Readonly<Partial<Record<ContractCase, string>>>;
  start(spec: AppSpec): Promise<RunningApp>;
}

/** `it` for a case the adapter meets; for one it opts out of, a skipped test whose title gives the reason. */
export function itUnlessSkipped(adapter: AdapterFactory, which: ContractCase): typeof it {
  const reason = adapter.skips?.[which];
  if (reason === undefined) return it;
  return ((title: string, fn?: () => unknown) => it.skip(`${title} [skipped: ${reason}]`, fn)) as typeof it;
}

export const PLAIN = ['/search', '/limited', '/health', '/critical', '/smooth', '/users/:id'] as const;

export async function handle(spec: Pick<AppSpec, 'served' | 'gate'>, path: string): Promise<{ ok: true }> {
  spec.served?.set(path, (spec.served.get(path) ?? 0) + 1);
  if (path === '/boom') throw new Error('boom');
  if (path === '/slow') await spec.gate?.wait();
  return { ok: true };
}

export async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function stop(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Stops the server, then closes the limiter (and its stores), as Fastify's onClose hook does. */
export async function closeBoth(server: Server, limiter: Limiter): Promise<void> {
  await stop(server);
  await limiter.close();
}
