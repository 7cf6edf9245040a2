import type { Descriptors } from '@sluice/core';
import {
  buildDescriptors,
  DEFAULT_IPV6_SUBNET,
  type DescriptorSettings,
  MAX_DESCRIPTOR_LENGTH,
} from '@sluice/core/http';

/** One request read from a log (or made up by `sluice simulate`), ready for the limiter. */
export interface ReplayRequest {
  /** When it arrived (epoch ms): the limiter's clock while it is decided. */
  readonly time: number;
  readonly descriptors: Descriptors;
  /** The status the server answered, when the log says (429s are counted beside the would-be denials). */
  readonly status?: number;
}

/** What a log line says about a request, before it becomes descriptors. */
export interface LoggedFacts {
  readonly ip: string | undefined;
  readonly method: string;
  readonly path: string;
  readonly apiKey: string | undefined;
  /** Descriptors of the app's own (tenant, plan, ...), mapped from log fields. */
  readonly extra: Readonly<Record<string, string>> | undefined;
}

/** The descriptor settings of an adapter left at its defaults. */
export const ADAPTER_DEFAULTS: DescriptorSettings = {
  ipv6Subnet: DEFAULT_IPV6_SUBNET,
  caseSensitiveRoutes: false,
  apiKeyHeader: 'x-api-key',
  maxValueLength: MAX_DESCRIPTOR_LENGTH,
};

const NO_HEADER = () => undefined;

/** Descriptors exactly as an adapter builds them (route normalisation, IPv6 /64, bounded values, auth). */
export function descriptorsOf(facts: LoggedFacts, settings: DescriptorSettings): Descriptors {
  return buildDescriptors(
    { ip: facts.ip, method: facts.method, url: facts.path, header: NO_HEADER },
    settings,
    { apiKey: facts.apiKey, descriptors: facts.extra },
  );
}
