/**
 * The size of an item as DynamoDB bills it ("Item sizes and formats" in the DynamoDB developer guide), for the
 * document client's native values: each attribute's name in UTF-8 plus its value — strings in UTF-8, binaries their
 * bytes, numbers one byte per two significant digits plus one, booleans and nulls one byte, lists and maps three bytes
 * plus one per element (and a map's key names), sets the sum of their elements.
 */
export function itemSizeBytes(item: Readonly<Record<string, unknown>>): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(item)) {
    if (value === undefined) continue;
    bytes += utf8Bytes(name) + valueBytes(value);
  }
  return bytes;
}

function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** Significant digits of a number as DynamoDB keeps it: no sign, exponent, point, leading or trailing zeros. */
function numberBytes(value: number | bigint): number {
  const mantissa = String(value)
    .replace(/^-/, '')
    .replace(/e.*$/i, '')
    .replace('.', '')
    .replace(/^0+/, '')
    .replace(/0+$/, '');
  return Math.ceil(Math.max(1, mantissa.length) / 2) + 1;
}

function valueBytes(value: unknown): number {
  if (value === null || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return utf8Bytes(value);
  if (typeof value === 'number' || typeof value === 'bigint') return numberBytes(value);
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) {
    let bytes = 0;
    for (const element of value) bytes += valueBytes(element);
    return bytes;
  }
  if (Array.isArray(value)) {
    return value.reduce((bytes: number, element) => bytes + 1 + valueBytes(element), 3);
  }
  if (typeof value === 'object') {
    // A wrapped number (`NumberValue`) prints as its digits.
    if ('value' in value && typeof (value as { value: unknown }).value === 'string' && !isPlainObject(value)) {
      return numberBytes(Number((value as { value: string }).value));
    }
    let bytes = 3;
    for (const [key, element] of Object.entries(value)) {
      if (element === undefined) continue;
      bytes += 1 + utf8Bytes(key) + valueBytes(element);
    }
    return bytes;
  }
  return 0;
}

function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** Write units of one item write: a unit per KB (1,024 bytes) or part of one, at least one. */
export function writeUnitsOf(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / 1024));
}

/** Read units of one strongly consistent item read: a unit per 4 KB or part of one, at least one. */
export function readUnitsOf(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / 4096));
}
