/** Key builders for the single table; every key shape lives here. */
export const keys = {
  entity: (collection: string, id: string) => ({ PK: `${collection}#${id}`, SK: 'META' }),
  unique: (collection: string, field: string, value: string) => ({
    PK: `UNIQUE#${collection}#${field}#${value}`,
    SK: 'UNIQUE',
  }),
  counter: (collection: string) => ({ PK: `COUNT#${collection}`, SK: 'COUNT' }),
  typeIndex: (collection: string) => `TYPE#${collection}`,
  parentIndex: (collection: string, id: string) => `${collection}#${id}`,
} as const;

/** The attributes that belong to the table's layout, not to the stored document. */
export const LAYOUT_ATTRIBUTES = ['PK', 'SK', 'GSI1PK', 'GSI1SK', 'GSI2PK', 'GSI2SK', 'version', 'expiresAtEpoch'];
