/**
 * The messages of envoy.service.ratelimit.v3 (rls.proto) and envoy.extensions.common.ratelimit.v3
 * (ratelimit.proto) this service reads and writes, with Envoy's field numbers; and grpc.health.v1's two.
 */
import { bytesOf, type Field, fields, MessageWriter, numberOf, text, WireError } from './wire.js';

/** RateLimitDescriptor.Entry {key = 1, value = 2}. */
export interface DescriptorEntry {
  readonly key: string;
  readonly value: string;
}

/** RateLimitResponse.RateLimit.Unit (and envoy.type.v3.RateLimitUnit up to DAY). */
export const UNIT = { UNKNOWN: 0, SECOND: 1, MINUTE: 2, HOUR: 3, DAY: 4, MONTH: 5, YEAR: 6 } as const;
export type UnitName = keyof typeof UNIT;

/** RateLimitDescriptor {entries = 1, limit = 2, hits_addend = 3 (UInt64Value)}. */
export interface RateLimitDescriptor {
  readonly entries: readonly DescriptorEntry[];
  /** RateLimitOverride {requests_per_unit = 1, unit = 2}. */
  readonly limit?: { readonly requestsPerUnit: number; readonly unit: number };
  readonly hitsAddend?: number;
}

/** RateLimitRequest {domain = 1, descriptors = 2, hits_addend = 3}. */
export interface RateLimitRequest {
  readonly domain: string;
  readonly descriptors: readonly RateLimitDescriptor[];
  /** 0 when unset: Envoy's "count 1". */
  readonly hitsAddend: number;
}

/** What the deserializer hands the handler: a request, or why it is not one (answered INVALID_ARGUMENT). */
export type Decoded = { readonly request: RateLimitRequest } | { readonly invalid: string };

/** Bounds on what one request may hold, checked while decoding, before anything is allocated for it. */
export interface RequestBounds {
  readonly maxBytes: number;
  readonly maxDescriptors: number;
  readonly maxEntries: number;
}

export const DEFAULT_BOUNDS: RequestBounds = { maxBytes: 64 * 1024, maxDescriptors: 64, maxEntries: 32 };

/** Decodes a RateLimitRequest; never throws (grpc-js would answer INTERNAL for a throwing deserializer). */
export function decodeRequest(buffer: Buffer, bounds: RequestBounds = DEFAULT_BOUNDS): Decoded {
  if (buffer.length > bounds.maxBytes)
    return { invalid: `the request is ${buffer.length} bytes; the limit is ${bounds.maxBytes}` };
  try {
    return { request: readRequest(buffer, bounds) };
  } catch (error) {
    if (error instanceof WireError) return { invalid: error.message };
    throw error;
  }
}

function readRequest(buffer: Uint8Array, bounds: RequestBounds): RateLimitRequest {
  let domain = '';
  let hitsAddend = 0;
  const descriptors: RateLimitDescriptor[] = [];
  for (const field of fields(buffer)) {
    if (field.number === 1) domain = text(field);
    else if (field.number === 3) hitsAddend = numberOf(field);
    else if (field.number === 2) {
      if (descriptors.length === bounds.maxDescriptors)
        throw new WireError(`more than ${bounds.maxDescriptors} descriptors`);
      descriptors.push(readDescriptor(bytesOf(field), bounds));
    }
  }
  return { domain, descriptors, hitsAddend };
}

function readDescriptor(buffer: Uint8Array, bounds: RequestBounds): RateLimitDescriptor {
  const entries: DescriptorEntry[] = [];
  let limit: RateLimitDescriptor['limit'];
  let hitsAddend: number | undefined;
  for (const field of fields(buffer)) {
    if (field.number === 1) {
      if (entries.length === bounds.maxEntries)
        throw new WireError(`a descriptor has more than ${bounds.maxEntries} entries`);
      entries.push(readEntry(bytesOf(field)));
    } else if (field.number === 2) limit = readOverride(bytesOf(field));
    else if (field.number === 3) hitsAddend = wrappedNumber(bytesOf(field));
  }
  return { entries, ...(limit ? { limit } : {}), ...(hitsAddend === undefined ? {} : { hitsAddend }) };
}

function readEntry(buffer: Uint8Array): DescriptorEntry {
  let key = '';
  let value = '';
  for (const field of fields(buffer)) {
    if (field.number === 1) key = text(field);
    else if (field.number === 2) value = text(field);
  }
  return { key, value };
}

function readOverride(buffer: Uint8Array): { requestsPerUnit: number; unit: number } {
  let requestsPerUnit = 0;
  let unit = 0;
  for (const field of fields(buffer)) {
    if (field.number === 1) requestsPerUnit = numberOf(field);
    else if (field.number === 2) unit = numberOf(field);
  }
  return { requestsPerUnit, unit };
}

/** google.protobuf.UInt64Value / UInt32Value {value = 1}. */
function wrappedNumber(buffer: Uint8Array): number {
  let value = 0;
  for (const field of fields(buffer)) if (field.number === 1) value = numberOf(field);
  return value;
}

/** RateLimitResponse.Code. */
export const CODE = { UNKNOWN: 0, OK: 1, OVER_LIMIT: 2 } as const;

/** DescriptorStatus {code = 1, current_limit = 2, limit_remaining = 3, duration_until_reset = 4}. */
export interface DescriptorStatus {
  readonly code: number;
  /** RateLimit {requests_per_unit = 1, unit = 2, name = 3}; absent when no rule applied. */
  readonly currentLimit?: { readonly requestsPerUnit: number; readonly unit: number; readonly name: string };
  readonly limitRemaining: number;
  /** Whole milliseconds; written as a google.protobuf.Duration {seconds = 1, nanos = 2}. */
  readonly durationUntilResetMs?: number;
}

/** RateLimitResponse {overall_code = 1, statuses = 2, response_headers_to_add = 3 (HeaderValue {key, value})}. */
export interface RateLimitResponse {
  readonly overallCode: number;
  readonly statuses: readonly DescriptorStatus[];
  readonly responseHeadersToAdd: readonly { readonly key: string; readonly value: string }[];
}

export function encodeResponse(response: RateLimitResponse): Buffer {
  const out = new MessageWriter().varint(1, response.overallCode);
  for (const status of response.statuses) out.message(2, encodeStatus(status));
  for (const header of response.responseHeadersToAdd) {
    out.message(3, new MessageWriter().string(1, header.key).string(2, header.value).finish());
  }
  return out.finish();
}

function encodeStatus(status: DescriptorStatus): Buffer {
  const out = new MessageWriter().varint(1, status.code);
  const limit = status.currentLimit;
  if (limit) {
    const rateLimit = new MessageWriter()
      .varint(1, limit.requestsPerUnit)
      .varint(2, limit.unit)
      .string(3, limit.name);
    out.message(2, rateLimit.finish());
  }
  out.varint(3, status.limitRemaining);
  if (status.durationUntilResetMs !== undefined) out.message(4, duration(status.durationUntilResetMs));
  return out.finish();
}

function duration(ms: number): Buffer {
  const whole = Math.max(0, Math.ceil(ms));
  return new MessageWriter()
    .varint(1, Math.floor(whole / 1000))
    .varint(2, (whole % 1000) * 1_000_000)
    .finish();
}

/** grpc.health.v1.HealthCheckResponse.ServingStatus. */
export const SERVING = { UNKNOWN: 0, SERVING: 1, NOT_SERVING: 2, SERVICE_UNKNOWN: 3 } as const;

/** HealthCheckRequest {service = 1}; a request that does not decode asks about the server as a whole. */
export function decodeHealthRequest(buffer: Buffer): string {
  try {
    for (const field of fields(buffer) as Iterable<Field>) if (field.number === 1) return text(field);
  } catch {
    return '';
  }
  return '';
}

/** HealthCheckResponse {status = 1}. */
export function encodeHealthResponse(status: number): Buffer {
  return new MessageWriter().varint(1, status).finish();
}
