import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';

/** True when the file starts with gzip's magic bytes (whatever its name). */
async function isGzip(path: string): Promise<boolean> {
  const file = await open(path, 'r');
  try {
    const { bytesRead, buffer } = await file.read(Buffer.alloc(2), 0, 2, 0);
    return bytesRead === 2 && buffer[0] === 0x1f && buffer[1] === 0x8b;
  } finally {
    await file.close();
  }
}

/** A file's bytes, gunzipped when it is gzip. */
async function openLog(path: string): Promise<Readable> {
  const raw = createReadStream(path);
  if (!(await isGzip(path))) return raw;
  const gunzip = createGunzip();
  // A read error on the file must end the line loop, not hang it.
  raw.on('error', (error) => gunzip.destroy(error));
  return raw.pipe(gunzip);
}

/** The lines of a log file (plain or gzip), streamed: memory stays flat whatever the file's size. */
export async function* logLines(path: string): AsyncGenerator<string> {
  const input = await openLog(path);
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  try {
    for await (const line of lines) yield line;
  } finally {
    lines.close();
    input.destroy();
  }
}
