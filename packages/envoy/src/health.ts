/** grpc.health.v1.Health: `Check`, and `Watch` (the status now, then NOT_SERVING when the service closes). */
import * as grpc from '@grpc/grpc-js';
import { decodeHealthRequest, encodeHealthResponse, SERVING } from './messages.js';

interface HealthRequest {
  readonly service: string;
}

/** The names a health check may ask about: the server as a whole, or the rate limit service. */
const SERVICES = new Set(['', 'envoy.service.ratelimit.v3.RateLimitService']);

function method(name: string, responseStream: boolean) {
  return {
    path: `/grpc.health.v1.Health/${name}`,
    requestStream: false,
    responseStream,
    requestSerialize: () => Buffer.alloc(0),
    // An object, not the bare name: grpc-js takes a falsy request ('' for the whole server) for none at all.
    requestDeserialize: (buffer: Buffer) => ({ service: decodeHealthRequest(buffer) }),
    responseSerialize: (status: number) => encodeHealthResponse(status),
    responseDeserialize: () => 0,
    originalName: name,
  };
}

/** The health service; `serving()` says whether the rate limit service can decide with its store now. */
export function healthService(serving: () => boolean) {
  const watchers = new Set<grpc.ServerWritableStream<HealthRequest, number>>();
  const status = () => (serving() ? SERVING.SERVING : SERVING.NOT_SERVING);
  const implementation: grpc.UntypedServiceImplementation = {
    check(call: grpc.ServerUnaryCall<HealthRequest, number>, callback: grpc.sendUnaryData<number>) {
      if (!SERVICES.has(call.request.service))
        return callback({ code: grpc.status.NOT_FOUND, details: 'unknown service' });
      callback(null, status());
    },
    watch(call: grpc.ServerWritableStream<HealthRequest, number>) {
      if (!SERVICES.has(call.request.service)) {
        call.write(SERVING.SERVICE_UNKNOWN);
        return;
      }
      call.write(status());
      watchers.add(call);
      call.on('cancelled', () => watchers.delete(call));
    },
  };
  return {
    definition: { check: method('Check', false), watch: method('Watch', true) } as grpc.ServiceDefinition,
    implementation,
    /** Tells watchers the service stops, and ends their streams so that shutdown is not held up by them. */
    closing() {
      for (const call of watchers) {
        call.write(SERVING.NOT_SERVING);
        call.end();
      }
      watchers.clear();
    },
  };
}
