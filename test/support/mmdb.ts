/**
 * A minimal MaxMind DB (MMDB, format 2.0) writer for tests: an IPv6 tree with 24-bit records, IPv4 networks
 * under ::/96 as MaxMind's own databases place them, and a data section of maps, strings, booleans and
 * unsigned integers. Enough to build the small GeoLite2-shaped files the @sluice/geoip tests read with the
 * real reader; not a general writer (no pointers, no deduplication).
 */

/** A value the data section can hold. */
export type MmdbValue =
  | string
  | number
  | boolean
  | readonly MmdbValue[]
  | { readonly [key: string]: MmdbValue };

/** One network of the database: `1.2.3.0/24` or `2001:db8::/32`, and its record. */
export interface MmdbNetwork {
  readonly network: string;
  readonly data: MmdbValue;
}

interface TreeNode {
  children: [TreeNode | number | undefined, TreeNode | number | undefined];
}

const METADATA_MARKER = Buffer.from([0xab, 0xcd, 0xef, ...Buffer.from('MaxMind.com')]);

/** The bytes of an MMDB file holding these networks (the later of two overlapping networks wins). */
export function buildMmdb(networks: readonly MmdbNetwork[], databaseType = 'Sluice-Test'): Buffer {
  const data: Buffer[] = [];
  let dataLength = 0;
  const root: TreeNode = { children: [undefined, undefined] };
  for (const { network, data: value } of networks) {
    const encoded = encode(value);
    insert(root, networkBits(network), dataLength);
    data.push(encoded);
    dataLength += encoded.length;
  }
  const nodes = numberNodes(root);
  const tree = Buffer.alloc(nodes.length * 6);
  nodes.forEach((node, index) => {
    node.children.forEach((child, side) => {
      tree.writeUIntBE(recordValue(child, nodes), index * 6 + side * 3, 3);
    });
  });
  const metadata = encode({
    node_count: nodes.length,
    record_size: 24,
    ip_version: 6,
    database_type: databaseType,
    binary_format_major_version: 2,
    binary_format_minor_version: 0,
    build_epoch: Math.floor(Date.now() / 1000),
    description: { en: 'Sluice test database' },
    languages: ['en'],
  });
  return Buffer.concat([tree, Buffer.alloc(16), ...data, METADATA_MARKER, metadata]);
}

/** The record pointing at a node, at data (offset into the data section), or at nothing. */
function recordValue(child: TreeNode | number | undefined, nodes: readonly TreeNode[]): number {
  if (child === undefined) return nodes.length;
  if (typeof child === 'number') return nodes.length + 16 + child;
  return nodes.indexOf(child);
}

/** Nodes in breadth-first order, the root first (number 0). */
function numberNodes(root: TreeNode): TreeNode[] {
  const nodes = [root];
  for (let index = 0; index < nodes.length; index += 1)
    for (const child of nodes[index]?.children ?? []) if (typeof child === 'object') nodes.push(child);
  return nodes;
}

function insert(root: TreeNode, bits: readonly number[], offset: number): void {
  let node = root;
  for (let depth = 0; depth < bits.length - 1; depth += 1) {
    const side = bits[depth] as 0 | 1;
    const child = node.children[side];
    if (typeof child === 'object') node = child;
    else {
      // A data record higher up is pushed down both sides, so the narrower network splits it.
      const next: TreeNode = { children: [child, child] };
      node.children[side] = next;
      node = next;
    }
  }
  node.children[bits[bits.length - 1] as 0 | 1] = offset;
}

/** The network's prefix bits in the 128-bit tree (IPv4 under ::/96). */
function networkBits(network: string): number[] {
  const [address = '', length = ''] = network.split('/');
  const bytes = address.includes(':')
    ? ipv6Bytes(address)
    : [...new Array(12).fill(0), ...ipv4Bytes(address)];
  const prefix = Number(length) + (address.includes(':') ? 0 : 96);
  const bits: number[] = [];
  for (let index = 0; index < prefix; index += 1)
    bits.push(((bytes[index >> 3] ?? 0) >> (7 - (index & 7))) & 1);
  return bits;
}

function ipv4Bytes(address: string): number[] {
  return address.split('.').map(Number);
}

function ipv6Bytes(address: string): number[] {
  const [head = '', tail = ''] = address.split('::');
  const groups = (text: string) =>
    text === '' ? [] : text.split(':').map((group) => Number.parseInt(group, 16));
  const front = groups(head);
  const back = groups(tail);
  const all = [...front, ...new Array(8 - front.length - back.length).fill(0), ...back];
  return all.flatMap((group) => [group >> 8, group & 0xff]);
}

/** A value in the data section's encoding: a control byte (type, size), then the payload. */
function encode(value: MmdbValue): Buffer {
  if (typeof value === 'string') return withControl(2, Buffer.from(value, 'utf8'));
  if (typeof value === 'boolean') return control(14, value ? 1 : 0);
  if (typeof value === 'number') return encodeUint(value);
  if (Array.isArray(value)) return Buffer.concat([control(11, value.length), ...value.map(encode)]);
  const parts: Buffer[] = [];
  const entries = Object.entries(value);
  for (const [key, item] of entries) parts.push(encode(key), encode(item));
  return Buffer.concat([control(7, entries.length), ...parts]);
}

/** Unsigned integers: uint16 (type 5), uint32 (6) or uint64 (9), in as few big-endian bytes as they need. */
function encodeUint(value: number): Buffer {
  const bytes: number[] = [];
  for (let rest = value; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  const type = value < 2 ** 16 ? 5 : value < 2 ** 32 ? 6 : 9;
  return withControl(type, Buffer.from(bytes));
}

function withControl(type: number, payload: Buffer): Buffer {
  return Buffer.concat([control(type, payload.length), payload]);
}

/** The control byte (and extended type and size bytes) of a value of this type and size. */
function control(type: number, size: number): Buffer {
  const head: number[] = [];
  const extended = type > 7;
  const sizeBits = size < 29 ? size : size < 285 ? 29 : 30;
  head.push(((extended ? 0 : type) << 5) | sizeBits);
  if (extended) head.push(type - 7);
  if (sizeBits === 29) head.push(size - 29);
  if (sizeBits === 30) head.push((size - 285) >> 8, (size - 285) & 0xff);
  return Buffer.from(head);
}
