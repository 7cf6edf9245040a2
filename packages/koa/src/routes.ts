import {
  ALL_RULES,
  firstScope,
  type LimitedRoute,
  type RouteMiddlewares,
  UNMATCHED_ROUTE,
} from '@sluice/core/http';
import type { Context } from 'koa';

/** The parts of @koa/router read here (its `match` is what its own dispatch calls). */
interface KoaRouter {
  readonly opts?: { readonly routerPath?: unknown };
  match?(path: string, method: string): { readonly pathAndMethod?: readonly RouterLayer[] };
  matchHost?(host: string): boolean;
}

interface RouterLayer {
  readonly path?: unknown;
  readonly methods?: readonly string[];
  readonly stack?: readonly unknown[];
}

/**
 * The route @koa/router will dispatch this request to: the app's first router (a middleware that @koa/router
 * marks with `.router`) with a route for the path and method, and in it the first route matched, as the
 * router runs them; its template, and the scope of the first of `ours` on it (every rule when none).
 * `UNMATCHED_ROUTE` when the app has routers and none has a route for the request (a 404). Undefined when the
 * app has no router this lookup can see (another router, one behind koa-mount): the route's middleware then
 * checks its rules alone.
 */
export function routeOf(ctx: Context, ours: RouteMiddlewares): LimitedRoute | undefined {
  let routers = 0;
  for (const middleware of ctx.app.middleware) {
    const router = (middleware as { router?: KoaRouter }).router;
    if (router?.match === undefined) continue;
    routers += 1;
    if (router.matchHost !== undefined && !router.matchHost(ctx.host)) continue;
    const own = router.opts?.routerPath;
    const layers = router.match(
      typeof own === 'string' && own !== '' ? own : ctx.path,
      ctx.method,
    ).pathAndMethod;
    const route = layers?.find((layer) => (layer.methods?.length ?? 0) > 0);
    if (route !== undefined) return foundRoute(route, ours);
  }
  return routers === 0 ? undefined : { scope: ALL_RULES, template: UNMATCHED_ROUTE };
}

function foundRoute(route: RouterLayer, ours: RouteMiddlewares): LimitedRoute | undefined {
  if (typeof route.path !== 'string') return undefined;
  return { scope: firstScope(route.stack ?? [], ours) ?? ALL_RULES, template: route.path };
}
