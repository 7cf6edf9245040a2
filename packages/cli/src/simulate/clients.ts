import type { Descriptors } from '@sluice/core';
import type { DescriptorSettings } from '@sluice/core/http';
import { descriptorsOf } from '../replay/request.js';

/** Built-in descriptors that come from request facts rather than from the app. */
const FACTS = new Set(['ip', 'method', 'route', 'api_key']);

/** A made-up IPv4 address per client: 10.x.y.z, distinct for the first 16 million clients. */
function ipOf(client: number): string {
  return `10.${(client >> 16) & 255}.${(client >> 8) & 255}.${client & 255}`;
}

/**
 * The descriptors of simulated client `n`, built as an adapter builds them: `fixed` values for every client
 * (`route=/search`, `tenant=acme`), and per-client values for the `vary` names (`ip` a 10.x address, any other
 * `<name>_<n>`, say `api_key_7`).
 */
export function clientDescriptors(
  fixed: Descriptors,
  vary: readonly string[],
  settings: DescriptorSettings,
): (client: number) => Descriptors {
  const varies = new Set(vary);
  const own = Object.entries(fixed).filter(([name]) => !FACTS.has(name));
  const ownVaried = vary.filter((name) => !FACTS.has(name));
  return (client) => {
    const extra: Record<string, string> = {};
    for (const [name, value] of own) if (value !== undefined) extra[name] = value;
    for (const name of ownVaried) extra[name] = `${name}_${client}`;
    return descriptorsOf(
      {
        ip: varies.has('ip') ? ipOf(client) : fixed.ip,
        method: fixed.method ?? 'GET',
        path: fixed.route ?? '/',
        apiKey: varies.has('api_key') ? `api_key_${client}` : fixed.api_key,
        extra,
      },
      settings,
    );
  };
}
