import { createReadStream, type ReadStream } from 'node:fs';
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

/** A file's bytes, gunzipped when it is gzip, and the file stream (whose bytesRead is the progress). */
async function openLog(path: string): Promise<{ input: Readable; file: ReadStream }> {
  // Looked at first: a file that cannot be opened fails here, before a stream could emit an error nobody hears.
  const gzip = await isGzip(path);
  const file = createReadStream(path);
  if (!gzip) return { input: file, file };
  const gunzip = createGunzip();
  // A read error on the file must end the line loop, not hang it.
  file.on('error', (error) => gunzip.destroy(error));
  return { input: file.pipe(gunzip), file };
}

/** How far into its file a log has been read. */
export interface ReadPosition {
  /** Bytes of the file read so far (compressed bytes for a gzip file, as its size counts them). */
  bytes: number;
}

/**
 * The lines of a log file (plain or gzip), streamed: memory stays flat whatever the file's size. `position`, when
 * given, follows the bytes read, for the time left.
 */
export async function* logLines(path: string, position?: ReadPosition): AsyncGenerator<string> {
  const { input, file } = await openLog(path);
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  try {
    for await (const line of lines) {
      if (position !== undefined) position.bytes = file.bytesRead;
      yield line;
    }
  } finally {
    lines.close();
    input.destroy();
    file.destroy();
  }
}
