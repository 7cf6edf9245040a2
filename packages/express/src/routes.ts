import type { CheckScope } from '@sluice/core/http';
import type { Request } from 'express';

/** The route a request will be served by, when it carries one of this limiter's `limiter.route()` middleware. */
export interface LimitedRoute {
  readonly scope: CheckScope;
  /** The route's template (`/users/:id`), mount paths included. */
  readonly template: string;
}

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

/** Route middleware of one limiter, each with the scope it checks. */
export type RouteMiddlewares = WeakMap<object, CheckScope>;

/**
 * The route Express will dispatch this request to, if it carries one of `ours`: the first route, in the app
 * router's order and through mounted routers, matching the path and method, as Express's router walks them.
 * Undefined when none matches, when the first match carries none of ours, or when the global middleware is not
 * at the app's root (its path is then relative to a mount this lookup does not know).
 */
export function limitedRoute(req: Request, ours: RouteMiddlewares): LimitedRoute | undefined {
  if (req.baseUrl !== '') return undefined;
  const stack = (req.app as { router?: { stack?: unknown } }).router?.stack;
  const path = pathname(req.url);
  const method = req.method;
  const found = firstRoute(stack, path, method, '');
  if (found === undefined) return undefined;
  const scope = routeScope(found.layer, method, ours);
  return scope === undefined ? undefined : { scope, template: found.template };
}

function pathname(url: string): string {
  const end = url.search(/[?#]/);
  return end === -1 ? url : url.slice(0, end);
}

/** Depth-first over mounted routers, the order Express tries layers in. */
function firstRoute(
  stack: unknown,
  path: string,
  method: string,
  base: string,
): { layer: RouterLayer; template: string } | undefined {
  if (!Array.isArray(stack)) return undefined;
  for (const layer of stack as RouterLayer[]) {
    let match: { readonly path?: string } | false;
    try {
      match = layer.match?.(path) ?? false;
    } catch {
      return undefined; // Express sends this request to its error handlers: no route.
    }
    if (match === false) continue;
    const route = layer.route;
    if (route !== undefined) {
      if (route._handlesMethod?.(method) !== true && method !== 'HEAD') continue;
      return typeof route.path === 'string' ? { layer, template: `${base}${route.path}` } : undefined;
    }
    const inner = (layer.handle as { stack?: unknown } | undefined)?.stack;
    if (inner === undefined || typeof match.path !== 'string') continue;
    const rest = path.slice(match.path.length);
    const found = firstRoute(inner, rest.startsWith('/') ? rest : `/${rest}`, method, `${base}${match.path}`);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The scope of the first of our middleware the route runs for this method. */
function routeScope(layer: RouterLayer, method: string, ours: RouteMiddlewares): CheckScope | undefined {
  const route = layer.route;
  const stack = route?.stack;
  if (!Array.isArray(stack)) return undefined;
  let name = method.toLowerCase();
  // Express serves HEAD with a route's GET handlers when it has none for HEAD.
  if (name === 'head' && !(stack as RouterLayer[]).some((entry) => entry.method === 'head')) name = 'get';
  for (const entry of stack as RouterLayer[]) {
    if (entry.method !== undefined && entry.method !== name) continue;
    const scope = typeof entry.handle === 'function' ? ours.get(entry.handle) : undefined;
    if (scope !== undefined) return scope;
  }
  return undefined;
}
