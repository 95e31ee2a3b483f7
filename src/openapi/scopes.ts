import { SCOPE_NAME_PATTERN, type ScopeTable } from '../authz/scopes.js';

/**
 * The public OpenAPI document with the live table's scopes in it. A route's schema is compiled
 * once, so the request bodies only say "a scope name" (routes/schemas.ts ScopeList); the names a
 * key may be given are the route table's, which a reload changes. So each time the document is
 * served, every list of scope names in it (an array whose items have the scope-name pattern) gets
 * the table's names as its items' `enum` and their descriptions in its own: once per table.
 */
export function createScopedDocument(document: () => unknown, table: () => ScopeTable): () => unknown {
  let made: { source: unknown; table: ScopeTable; document: unknown } | undefined;
  return () => {
    const source = document();
    const scopes = table();
    if (made === undefined || made.source !== source || made.table !== scopes) made = { source, table: scopes, document: withScopes(source, scopes) };
    return made.document;
  };
}

export function withScopes(document: unknown, table: ScopeTable): unknown {
  const listed = table.names.map((name) => `\`${name}\` (${table.descriptions.get(name) ?? ''})`).join(', ');
  const copy = structuredClone(document);
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node !== 'object' || node === null) return;
    const schema = node as { type?: unknown; items?: { pattern?: unknown; enum?: unknown }; description?: unknown };
    if (schema.type === 'array' && schema.items?.pattern === SCOPE_NAME_PATTERN) {
      schema.items = { ...schema.items, enum: [...table.names] };
      schema.description = `${typeof schema.description === 'string' ? `${schema.description} ` : ''}Declared now: ${listed}.`;
    }
    for (const value of Object.values(node)) visit(value);
  };
  visit(copy);
  return copy;
}
