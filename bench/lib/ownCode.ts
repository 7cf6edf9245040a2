/**
 * The limiter's own code in a served process's CPU profile (V8's profiler, over the inspector): the measure of
 * issue 24's memory targets, where the few µs a limiter adds are below what a round's server CPU resolves.
 */
import type { Framework, LimiterKind } from './spec.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/** The parts of a `.cpuprofile` read here. */
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The files of each limiter's own code. */
const OWN_CODE: Record<string, RegExp> = {
  sluice: /packages\/(core|fastify|express|koa|redis)\/dist\//,
  fastify: /@fastify\/rate-limit|toad-cache/,
  express: /express-rate-limit|rate-limit-redis/,
  koa: /koa-ratelimit/,
  rlflex: /rate-limiter-flexible/,
};

/** The files of one contender's own code. */
export function ownCodeOf(framework: Framework, limiter: LimiterKind): RegExp {
  if (limiter.startsWith('sluice')) return OWN_CODE.sluice!;
  return limiter === 'rlflex-redis' ? OWN_CODE.rlflex! : OWN_CODE[framework]!;
}

/** Frames where the framework goes on to the route: a middleware's `next()` runs the rest under it. */
const DOWNSTREAM =
  /fastify\/lib\/(hooks|handle-request|wrap-thenable|route)\.js|router\/lib\/(layer|route)\.js|express\/lib\/router|koa-compose|bench\/dist\/apps/;

/**
 * µs per request of the samples whose stack reaches the limiter's own code before a frame that goes on to the
 * route: its own functions and what they call (header writes, hashing, its promise continuations).
 */
export function ownMicros(profile: CpuProfile, own: RegExp, requests: number): number {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  let micros = 0;
  profile.samples.forEach((sample, i) => {
    for (let id: number | undefined = sample; id !== undefined; id = parent.get(id)) {
      const url = byId.get(id)?.callFrame.url ?? '';
      if (own.test(url)) micros += profile.timeDeltas[i + 1] ?? 0;
      if (own.test(url) || DOWNSTREAM.test(url)) break;
    }
  });
  return micros / requests;
}

/**
 * The whole process per request: µs not idle (the profiler's own included, alike for every contender) and the
 * share of them in the garbage collector, which the own-code figure leaves out.
 */
export function processMicros(profile: CpuProfile, requests: number): { busy: number; collecting: number } {
  const nameOf = new Map(profile.nodes.map((node) => [node.id, node.callFrame.functionName]));
  let busy = 0;
  let collecting = 0;
  profile.samples.forEach((sample, i) => {
    const name = nameOf.get(sample);
    const delta = profile.timeDeltas[i + 1] ?? 0;
    if (name !== '(idle)') busy += delta;
    if (name === '(garbage collector)') collecting += delta;
  });
  return { busy: busy / requests, collecting: collecting / requests };
}
