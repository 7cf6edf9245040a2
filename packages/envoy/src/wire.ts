/**
 * The protobuf wire format, as far as the rate limit and health messages need it: varints, length-delimited
 * fields, and skipping fields this service does not read. Strings are decoded strictly (proto3 requires UTF-8).
 */

/** A message that does not decode: truncated, a bad wire type, a string that is not UTF-8. */
export class WireError extends Error {
  readonly code = 'ERR_SLUICE_ENVOY_WIRE';
}

const WIRE = { varint: 0, fixed64: 1, bytes: 2, fixed32: 5 } as const;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** One field of a message: its number and its raw value (a number for varints, bytes otherwise). */
export type Field =
  | { readonly number: number; readonly varint: number }
  | { readonly number: number; readonly bytes: Uint8Array };

/** Reads the fields of one message in order; unknown wire types other than the four proto3 uses are refused. */
export function* fields(buffer: Uint8Array): Generator<Field> {
  let at = 0;
  while (at < buffer.length) {
    const [tag, afterTag] = readVarint(buffer, at);
    const number = Math.floor(tag / 8);
    const type = tag % 8;
    if (number === 0) throw new WireError('field number 0');
    if (type === WIRE.varint) {
      const [value, next] = readVarint(buffer, afterTag);
      at = next;
      yield { number, varint: value };
    } else if (type === WIRE.bytes) {
      const [length, start] = readVarint(buffer, afterTag);
      if (start + length > buffer.length) throw new WireError('a field runs past the end of the message');
      at = start + length;
      yield { number, bytes: buffer.subarray(start, at) };
    } else if (type === WIRE.fixed64 || type === WIRE.fixed32) {
      at = afterTag + (type === WIRE.fixed64 ? 8 : 4);
      if (at > buffer.length) throw new WireError('a field runs past the end of the message');
    } else {
      throw new WireError(`wire type ${type} is not one proto3 uses`);
    }
  }
}

/** A varint as a number (exact up to 2^53, enough for every field here) and the offset after it. */
function readVarint(buffer: Uint8Array, start: number): [number, number] {
  let value = 0;
  let scale = 1;
  for (let at = start; at < buffer.length && at < start + 10; at++) {
    const byte = buffer[at] as number;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return [value, at + 1];
    scale *= 128;
  }
  throw new WireError('a varint is truncated or longer than 10 bytes');
}

/** A field's string value; throws WireError for bytes that are not UTF-8. */
export function text(field: Field): string {
  if (!('bytes' in field)) throw new WireError(`field ${field.number} should be length-delimited`);
  try {
    return strictUtf8.decode(field.bytes);
  } catch {
    throw new WireError(`field ${field.number} is not valid UTF-8`);
  }
}

/** A field's nested message bytes. */
export function bytesOf(field: Field): Uint8Array {
  if (!('bytes' in field)) throw new WireError(`field ${field.number} should be length-delimited`);
  return field.bytes;
}

/** A field's varint value. */
export function numberOf(field: Field): number {
  if (!('varint' in field)) throw new WireError(`field ${field.number} should be a varint`);
  return field.varint;
}

/** Builds one message, field by field; fields at their default value are left out, as proto3 does. */
export class MessageWriter {
  private readonly parts: Uint8Array[] = [];

  varint(number: number, value: number): this {
    if (value !== 0) this.parts.push(varint(number * 8 + WIRE.varint), varint(value));
    return this;
  }

  string(number: number, value: string): this {
    return value === '' ? this : this.bytes(number, Buffer.from(value, 'utf8'));
  }

  /** A nested message (written even when empty: presence means something for messages). */
  message(number: number, value: Uint8Array): this {
    this.parts.push(varint(number * 8 + WIRE.bytes), varint(value.length), value);
    return this;
  }

  bytes(number: number, value: Uint8Array): this {
    return value.length === 0 ? this : this.message(number, value);
  }

  finish(): Buffer {
    return Buffer.concat(this.parts);
  }
}

function varint(value: number): Uint8Array {
  const out: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    out.push((rest % 128) | 0x80);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
  return Uint8Array.from(out);
}
