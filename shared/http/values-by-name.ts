/**
 * Name → value pairs of a request (headers, query parameters) as name → every value, in order. In a Map, so that names
 * any client may send (`__proto__`, `toString`) stay keys like any other and never reach Object.prototype.
 */
export function valuesByName(pairs: Iterable<readonly [string, string]>): Map<string, string[]> {
  const values = new Map<string, string[]>();
  for (const [name, value] of pairs) {
    const known = values.get(name);
    if (known) known.push(value);
    else values.set(name, [value]);
  }
  return values;
}
