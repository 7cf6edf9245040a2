import { describe, expect, it } from 'vitest';
import { decodeRequest } from './messages.js';

/** A length-delimited field. */
const bytes = (field: number, body: Buffer) =>
  Buffer.concat([Buffer.from([(field << 3) | 2, body.length]), body]);
const text = (field: number, value: string) => bytes(field, Buffer.from(value));

describe('decodeRequest', () => {
  const entry = bytes(1, Buffer.concat([text(1, 'user'), text(2, 'u1')]));

  it('skips fields it does not read, of every wire type proto3 uses (a newer Envoy may send more)', () => {
    const unknown = Buffer.concat([
      Buffer.from([(9 << 3) | 0, 0x96, 0x01]), // varint 150
      Buffer.from([(10 << 3) | 1, 1, 2, 3, 4, 5, 6, 7, 8]), // fixed64
      Buffer.from([(11 << 3) | 5, 1, 2, 3, 4]), // fixed32
      text(12, 'later'),
    ]);
    const descriptor = bytes(2, Buffer.concat([entry, unknown]));
    const decoded = decodeRequest(
      Buffer.concat([text(1, 'd'), unknown, descriptor, Buffer.from([3 << 3, 0x05])]),
    );
    expect(decoded).toEqual({
      request: { domain: 'd', hitsAddend: 5, descriptors: [{ entries: [{ key: 'user', value: 'u1' }] }] },
    });
  });

  it('reads a descriptor hits_addend (UInt64Value) and a limit override', () => {
    const override = bytes(2, Buffer.from([1 << 3, 7, 2 << 3, 2]));
    const hits = bytes(3, Buffer.from([1 << 3, 0x80, 0x01])); // 128
    const decoded = decodeRequest(
      Buffer.concat([text(1, 'd'), bytes(2, Buffer.concat([entry, override, hits]))]),
    );
    expect(decoded).toEqual({
      request: {
        domain: 'd',
        hitsAddend: 0,
        descriptors: [
          {
            entries: [{ key: 'user', value: 'u1' }],
            limit: { requestsPerUnit: 7, unit: 2 },
            hitsAddend: 128,
          },
        ],
      },
    });
  });

  it.each([
    ['a group (wire type 3)', Buffer.from([(1 << 3) | 3])],
    ['a truncated varint', Buffer.from([3 << 3, 0x80])],
    ['a field longer than the message', Buffer.from([(1 << 3) | 2, 10, 0x61])],
    ['field number 0', Buffer.from([0x00, 0x01])],
    ['a varint where a string belongs', Buffer.from([1 << 3, 1])],
  ])('refuses %s without throwing', (_case, buffer) => {
    expect(decodeRequest(buffer)).toEqual({ invalid: expect.any(String) });
  });
});
