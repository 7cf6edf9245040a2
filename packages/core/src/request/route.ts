/** How the app's router compares paths. */
export interface PathOptions {
  /** True when the router tells `/Search` from `/search` (most routers do not, by default). */
  readonly caseSensitive?: boolean;
}

/**
 * The `route` descriptor for a request whose route template is unknown: the path as the router
 * would serve it, so `/Search`, `/search/`, `//search` and `/%73earch` cannot dodge a `/search` rule.
 * Drops the query, percent-decodes once (an encoded `/` stays encoded: it does not split segments),
 * collapses repeated slashes, drops a trailing slash and folds case unless the router is case-sensitive.
 */
export function normalizePath(url: string, options: PathOptions = {}): string {
  // Most paths are already normal: lower-case segments without escapes, empty or repeated slashes.
  if (NORMAL_PATH.test(url)) return url;
  let path = pathOf(url);
  if (!path.startsWith('/')) path = absoluteFormPath(path);
  path = decodePath(path).replace(/\/{2,}/g, '/');
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  return options.caseSensitive ? path : path.toLowerCase();
}

/** A path normalizePath would return unchanged, whether or not the router is case-sensitive. */
const NORMAL_PATH = /^\/(?:[a-z0-9._~-]+(?:\/[a-z0-9._~-]+)*)?$/;

/** A request target without its query and fragment. */
export function pathOf(url: string): string {
  const end = url.search(/[?#]/);
  return end === -1 ? url : url.slice(0, end);
}

/** `GET http://host/path HTTP/1.1` (absolute-form target): keep the path only. */
function absoluteFormPath(target: string): string {
  try {
    return new URL(target).pathname;
  } catch {
    return `/${target}`;
  }
}

function decodePath(path: string): string {
  if (!path.includes('%')) return path;
  return path.split(/%2f/i).map(decodeSegmentText).join('%2F');
}

/** decodeURIComponent, or byte by byte when the text holds malformed escapes (`%zz`, cut UTF-8). */
function decodeSegmentText(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text.replace(/%([0-9a-f]{2})/gi, (sequence, hex: string) => {
      const code = Number.parseInt(hex, 16);
      return code < 0x80 ? String.fromCharCode(code) : sequence.toUpperCase();
    });
  }
}

/**
 * The `route` descriptor of a request no route matches (a 404) on every adapter that can tell: one fixed
 * value, so a rule keyed by `[ip, route]` gives a scanner one counter for all its guesses, never one per
 * guessed path; `match: {route: '(unmatched)'}` limits 404s on their own. Route templates start with `/`, so
 * it names no route.
 */
export const UNMATCHED_ROUTE = '(unmatched)';
