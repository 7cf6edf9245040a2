import { type ProxyTrust, settingTrust } from './proxy.js';

/**
 * A Fastify instance's `trustProxy` setting, as the proxy notices read it (@sluice/fastify, and NestJS on
 * @nestjs/platform-fastify). Fastify 5 has no public accessor: it is read from the options the instance keeps
 * under a symbol; undefined when they cannot be found.
 */
export function fastifyTrust(instance: object): ProxyTrust | undefined {
  for (let holder: object | null = instance; holder !== null; holder = Object.getPrototypeOf(holder)) {
    const key = Object.getOwnPropertySymbols(holder).find(
      (symbol) => symbol.description === 'fastify.options',
    );
    if (key === undefined) continue;
    return settingTrust((holder as Record<symbol, { trustProxy?: unknown } | undefined>)[key]?.trustProxy);
  }
  return undefined;
}
