import { type RedisScript, redisScript } from './transport.js';

/**
 * How the evaluation scripts write a counter's state (the algorithms whose state is two or three numbers): as
 * text, which every version reads, or binary (a zero byte, then little-endian doubles), which only versions from
 * the one that added it read, and which costs Redis less per check (no number text to parse or print). Every
 * version from that one reads both, so a fleet moves to binary in two steps (see the package README).
 */
export type StateFormat = 'text' | 'binary';

/** The line of every script that writes states, saying it writes text; the binary script has it on. */
export const BINARY_STATE_OFF = 'local BINARY_STATE = false';
const BINARY_STATE_ON = 'local BINARY_STATE = true';

const binaryScripts = new Map<string, RedisScript>();

/**
 * The script as it writes states in `format`: the script itself for text; for binary, the same script with
 * BINARY_STATE on, made once per script. A script that writes no such state is the same in both.
 */
export function writing(script: RedisScript, format: StateFormat): RedisScript {
  if (format === 'text' || !script.lua.includes(BINARY_STATE_OFF)) return script;
  let made = binaryScripts.get(script.sha);
  if (made === undefined) {
    made = redisScript(`${script.name}Binary`, script.lua.replace(BINARY_STATE_OFF, BINARY_STATE_ON));
    binaryScripts.set(script.sha, made);
  }
  return made;
}
