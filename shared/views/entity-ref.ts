/** A reference to another resource, with its relative self link, as the reference controller renders it. */
export function entityRef(collection: string, id: string, name: string) {
  return { entity: collection, id, name, _links: { self: { href: `./${collection}/${id}` } } };
}

/** The `_links` of a resource: at least its own relative URL. */
export function selfLinks(collection: string, id: string, extra: Readonly<Record<string, string>> = {}) {
  const links: Record<string, { href: string }> = { self: { href: `./${collection}/${id}` } };
  for (const [name, path] of Object.entries(extra)) links[name] = { href: `./${collection}/${id}/${path}` };
  return links;
}
