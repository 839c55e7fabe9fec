/** What an update request does to the attributes it names. */
export interface AttributeChanges {
  /** Attribute name → the value it is SET to when that is one placeholder, else undefined (computed, or ADDed). */
  readonly set: ReadonlyMap<string, unknown>;
  readonly removed: ReadonlySet<string>;
}

export interface UpdateRequest {
  readonly UpdateExpression?: string;
  readonly ExpressionAttributeNames?: Readonly<Record<string, string>>;
  readonly ExpressionAttributeValues?: Readonly<Record<string, unknown>>;
}

const CLAUSE = /\b(SET|REMOVE|ADD|DELETE)\b/gi;

/** Splits on commas outside parentheses (`if_not_exists(a, :b)` is one operand). */
function topLevelParts(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '(') depth++;
    else if (char === ')') depth--;
    else if (char === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((part) => part.trim()).filter((part) => part !== '');
}

/** The top-level attribute a document path starts with (`#a.b[0]` → the name `#a` stands for). */
function attributeOf(path: string, names: Readonly<Record<string, string>>): string {
  const head = path.trim().split(/[.[]/)[0] ?? '';
  return head.startsWith('#') ? (names[head] ?? head) : head;
}

/** The attributes an UpdateExpression sets, adds to or removes (top-level names; nested paths count as their top). */
export function attributeChanges(request: UpdateRequest): AttributeChanges {
  const set = new Map<string, unknown>();
  const removed = new Set<string>();
  const expression = request.UpdateExpression ?? '';
  const names = request.ExpressionAttributeNames ?? {};
  const values = request.ExpressionAttributeValues ?? {};
  const clauses = [...expression.matchAll(CLAUSE)];
  clauses.forEach((match, i) => {
    const body = expression.slice((match.index ?? 0) + match[0].length, clauses[i + 1]?.index ?? expression.length);
    const kind = match[0].toUpperCase();
    for (const part of topLevelParts(body)) {
      if (kind === 'REMOVE') {
        removed.add(attributeOf(part, names));
        continue;
      }
      if (kind === 'SET') {
        const [path = '', operand = ''] = part.split(/=(.*)/s);
        const value = operand.trim();
        set.set(attributeOf(path, names), /^:\w+$/.test(value) ? values[value] : undefined);
        continue;
      }
      // ADD and DELETE: `path value`.
      set.set(attributeOf(part.split(/\s+/)[0] ?? '', names), undefined);
    }
  });
  return { set, removed };
}
