import {
  ALL_RULES,
  type CheckScope,
  firstScope,
  type LimitedRoute,
  pathOf,
  type RouteMiddlewares,
  UNMATCHED_ROUTE,
} from '@sluice/core/http';
import type { Request } from 'express';

/** The parts of Express's router (the `router` package) read here; typed loosely, they are not public types. */
interface RouterLayer {
  readonly route?: {
    readonly path?: unknown;
    readonly stack?: unknown;
    _handlesMethod?(method: string): boolean;
  };
  readonly handle?: unknown;
  readonly method?: string;
  match?(path: string): { readonly path?: string } | false;
}

/**
 * The route Express will dispatch this request to: the first route, in the app router's order and through
 * mounted routers, matching the path and method, as Express's router walks them; its template, and the scope
 * of the first of `ours` on it (every rule when none). `UNMATCHED_ROUTE` when no route matches (a 404).
 * Undefined when this lookup cannot tell: the global middleware is not at the app's root (its path is then
 * relative to a mount this lookup does not know), or the path goes into a mounted sub-app.
 */
export function routeOf(req: Request, ours: RouteMiddlewares): LimitedRoute | undefined {
  if (req.baseUrl !== '') return undefined;
  const stack = (req.app as { router?: { stack?: unknown } }).router?.stack;
  const method = req.method;
  const found = firstRoute(stack, pathOf(req.url), method, '');
  if (found === 'unknown') return undefined;
  if (found === 'none') return { scope: ALL_RULES, template: UNMATCHED_ROUTE };
  return { scope: routeScope(found.layer, method, ours) ?? ALL_RULES, template: found.template };
}

type Found = { layer: RouterLayer; template: string } | 'none' | 'unknown';

/** Depth-first over mounted routers, the order Express tries layers in. */
function firstRoute(stack: unknown, path: string, method: string, base: string): Found {
  if (!Array.isArray(stack)) return 'unknown';
  for (const layer of stack as RouterLayer[]) {
    let match: { readonly path?: string } | false;
    try {
      match = layer.match?.(path) ?? false;
    } catch {
      return 'none'; // Express sends this request to its error handlers: no route.
    }
    if (match === false) continue;
    const route = layer.route;
    if (route !== undefined) {
      if (route._handlesMethod?.(method) !== true && method !== 'HEAD') continue;
      return typeof route.path === 'string' ? { layer, template: `${base}${route.path}` } : 'unknown';
    }
    const inner = (layer.handle as { stack?: unknown } | undefined)?.stack;
    // A sub-app (`app.use('/admin', adminApp)`) routes with a router this lookup cannot reach.
    if (inner === undefined) {
      if ((layer.handle as { name?: unknown } | undefined)?.name === 'mounted_app') return 'unknown';
      continue;
    }
    if (typeof match.path !== 'string') continue;
    const rest = path.slice(match.path.length);
    const found = firstRoute(inner, rest.startsWith('/') ? rest : `/${rest}`, method, `${base}${match.path}`);
    if (found !== 'none') return found;
  }
  return 'none';
}

/** The scope of the first of our middleware the route runs for this method. */
function routeScope(layer: RouterLayer, method: string, ours: RouteMiddlewares): CheckScope | undefined {
  const stack = layer.route?.stack;
  if (!Array.isArray(stack)) return undefined;
  let name = method.toLowerCase();
  // Express serves HEAD with a route's GET handlers when it has none for HEAD.
  if (name === 'head' && !(stack as RouterLayer[]).some((entry) => entry.method === 'head')) name = 'get';
  return firstScope(stack as RouterLayer[], ours, (entry) =>
    entry.method === undefined || entry.method === name ? entry.handle : undefined,
  );
}
