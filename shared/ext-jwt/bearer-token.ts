/**
 * The bearer token of an `Authorization` header, if it carries one. On its own so that every request can look for one
 * without loading what verifies it.
 */
export function bearerTokenOf(headers: Readonly<Record<string, string | undefined>>): string | undefined {
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(headers.authorization ?? '');
  return match?.[1];
}
