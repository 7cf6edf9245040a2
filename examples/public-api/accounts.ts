import type { IncomingHttpHeaders } from 'node:http';

/** The example's API keys and the tenant each belongs to (a real API would look them up). */
const ACCOUNTS: ReadonlyMap<string, { readonly tenant: string }> = new Map([
  ['k_demo', { tenant: 'demo' }],
  ['k_acme', { tenant: 'acme' }],
]);

/** The account of the request's `x-api-key`, if the key is a real one. */
export function accountOf(headers: IncomingHttpHeaders): { readonly tenant: string } | undefined {
  const key = headers['x-api-key'];
  return typeof key === 'string' ? ACCOUNTS.get(key) : undefined;
}

/** Whether an API key is a real one: refused keys are anonymous to the limiter, so the per-IP rules apply. */
export function isKnownKey(key: string): boolean {
  return ACCOUNTS.has(key);
}

/**
 * Descriptors for the rules: the tenant of a known key. An unknown key counts as anonymous, so that rotating
 * made-up keys cannot escape the per-IP limit.
 */
export function accountDescriptors(req: { readonly headers: IncomingHttpHeaders }) {
  const account = accountOf(req.headers);
  return account ? { tenant: account.tenant } : { api_key: undefined, auth: 'anonymous' };
}

/** Where the example's rules live. */
export const RULES_PATH = new URL('./rules.yaml', import.meta.url).pathname;

/** How long a demo export takes, ms (`?seconds=` overrides it, up to 30). */
export function exportDuration(query: unknown): number {
  const seconds = Number((query as { seconds?: unknown } | undefined)?.seconds ?? 3);
  return Number.isFinite(seconds) ? Math.min(30, Math.max(0, seconds)) * 1000 : 3000;
}
