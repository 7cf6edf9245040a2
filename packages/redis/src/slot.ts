const SLOTS = 16_384;

/** CRC16-XMODEM table, as Redis Cluster uses for key slots. */
const TABLE = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[i] = crc;
  }
  return table;
})();

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ byte) & 0xff]!;
  return crc;
}

/** The Redis Cluster slot of a hash tag (the text between the braces of `{tag}`). */
export function slotOfTag(tag: string): number {
  return crc16(new TextEncoder().encode(tag)) % SLOTS;
}
