/**
 * Test-only: a @grpc/grpc-js client built from the .proto files in fixtures/proto (written from Envoy's API),
 * so the service's hand-written codecs are checked against protobufjs's reading of the same definitions.
 */
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as loader from '@grpc/proto-loader';

const PROTO = fileURLToPath(new URL('../../fixtures/proto/', import.meta.url));

export interface Entry {
  key: string;
  value: string;
}
export interface Descriptor {
  entries: Entry[];
  limit?: { requests_per_unit: number; unit: number };
  hits_addend?: { value: number };
}
export interface Status {
  code: 'OK' | 'OVER_LIMIT' | 'UNKNOWN';
  current_limit: { requests_per_unit: number; unit: string; name: string } | null;
  limit_remaining: number;
  duration_until_reset: { seconds: string; nanos: number } | null;
}
export interface Response {
  overall_code: 'OK' | 'OVER_LIMIT' | 'UNKNOWN';
  statuses: Status[];
  response_headers_to_add: Entry[];
}

function load(file: string): grpc.GrpcObject {
  const definition = loader.loadSync(file, {
    includeDirs: [PROTO],
    keepCase: true,
    defaults: true,
    enums: String,
    longs: String,
  });
  return grpc.loadPackageDefinition(definition);
}

type Namespace = Record<string, unknown>;
function at(object: grpc.GrpcObject, path: string): grpc.ServiceClientConstructor {
  return path
    .split('.')
    .reduce<unknown>((node, part) => (node as Namespace)[part], object) as grpc.ServiceClientConstructor;
}

/** A rate limit client on `port`, and a health client; `close()` ends both. */
export function rlsClient(port: number) {
  const Rls = at(load('rls.proto'), 'envoy.service.ratelimit.v3.RateLimitService');
  const Health = at(load('health.proto'), 'grpc.health.v1.Health');
  const target = `127.0.0.1:${port}`;
  const credentials = grpc.credentials.createInsecure();
  const rls = new Rls(target, credentials);
  const health = new Health(target, credentials);
  const unary = <T>(client: grpc.Client, method: string, request: unknown): Promise<T> =>
    new Promise((resolve, reject) => {
      const call = (
        client as unknown as Record<string, (r: unknown, cb: (e: Error | null, v: T) => void) => void>
      )[method];
      call?.call(client, request, (error, value) => (error ? reject(error) : resolve(value)));
    });
  return {
    shouldRateLimit: (request: { domain: string; descriptors: Descriptor[]; hits_addend?: number }) =>
      unary<Response>(rls, 'ShouldRateLimit', request),
    check: (service = '') => unary<{ status: string }>(health, 'Check', { service }),
    /** Health Watch on the whole server: each status as it comes. */
    watch: (onStatus: (status: string) => void) => {
      const stream = (health as unknown as { Watch(r: unknown): NodeJS.EventEmitter }).Watch({ service: '' });
      stream.on('data', (message: { status: string }) => onStatus(message.status));
      stream.on('error', () => {});
    },
    /** Sends raw bytes as a ShouldRateLimit request (what a broken or hostile client sends). */
    raw: (bytes: Buffer) =>
      new Promise<Buffer>((resolve, reject) => {
        rls.makeUnaryRequest(
          '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit',
          (b: Buffer) => b,
          (b: Buffer) => b,
          bytes,
          (error, value) => (error ? reject(error) : resolve(value as Buffer)),
        );
      }),
    close() {
      rls.close();
      health.close();
    },
  };
}

/** A descriptor from pairs: `d(['auth', 'api_key'], ['api_key', 'k1'])`. */
export function d(...pairs: [string, string][]): Descriptor {
  return { entries: pairs.map(([key, value]) => ({ key, value })) };
}

/** Response headers as a record. */
export function headers(response: Response): Record<string, string> {
  return Object.fromEntries(response.response_headers_to_add.map((h) => [h.key, h.value]));
}
