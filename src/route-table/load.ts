/**
 * Reading a routes file (AUTHGATE_ROUTES_FILE): YAML (so JSON too) → the schema (schema.ts) →
 * the compiler (compile.ts) → an immutable RouteTable, or every reason it is not one, each
 * placed in the file by line and JSON pointer, like `nginx -t`:
 *
 *   routes.yaml:12: /routes/1/mathc: unknown key "mathc" (a route takes id, path, match, ...)
 *
 * The start (config/load.ts), `authgate routes check|explain` and a reload all come through
 * here, so a file is judged the same way by each. Nothing here touches the live table.
 */
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject } from 'ajv';
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import { isScopeName } from '../authz/scopes.js';
import { RATE_LIMIT_FORM } from '../limits/rate-limit.js';
import { compileRoutes, escapePointer, pathProblem, type CompileContext } from './compile.js';
import { referenceErrorsDespiteShape } from './salvage.js';
import { routesSchemaJson, MAX_NAME_LENGTH } from './schema.js';
import { routeWarnings } from './warnings.js';
import type { RouteFileError, RoutesFile, RouteTable } from './types.js';

/** One thing wrong with a file, where it is: line (1-based; undefined when the file has none, e.g. unreadable) and JSON pointer (undefined for a YAML syntax error). */
export type LocatedRouteError = Readonly<{ file: string; line: number | undefined; pointer: string | undefined; message: string }>;

/** What the environment gives the compiler; the source is the file's path. */
export type LoadContext = Omit<CompileContext, 'source'>;

export type ParseResult = { ok: true; file: RoutesFile } | { ok: false; errors: LocatedRouteError[] };
/** `warnings`: what `routes check` warns of in a file the gateway takes (route-table/warnings.ts). */
export type LoadResult = { ok: true; table: RouteTable; file: RoutesFile; warnings: LocatedRouteError[] } | { ok: false; errors: LocatedRouteError[] };

/** A routes file is configuration, not data: anything this large is a mistake. */
export const MAX_ROUTES_FILE_BYTES = 1024 * 1024;

/** Reads, checks and compiles the file at `path`. Synchronous: a start and a check read it once, a reload between requests. */
export function loadRoutesFile(path: string, context: LoadContext): LoadResult {
  const text = readRoutesText(path);
  if (typeof text !== 'string') return { ok: false, errors: [text] };
  return loadRoutesText(text, path, context);
}

/** As loadRoutesFile, on text already read (`path` names it in errors and becomes the table's source). */
export function loadRoutesText(text: string, path: string, context: LoadContext): LoadResult {
  const shaped = shapeOf(text, path);
  if ('located' in shaped) return { ok: false, errors: shaped.located };
  const compile = (file: RoutesFile) => compileRoutes(file, { ...context, source: path });
  if (shaped.schemaErrors !== undefined) {
    // Every error at once: the compiler's on what had its shape too (salvage.ts), in the file's order.
    const shape = schemaErrors(shaped.schemaErrors);
    const references = referenceErrorsDespiteShape(shaped.value, shaped.schemaErrors, shape, (file) => validator()(file) === true, compile);
    return { ok: false, errors: locate([...shape, ...references], text, path, shaped.doc, shaped.lines) };
  }
  const file = shaped.value as RoutesFile;
  const compiled = compile(file);
  if (!compiled.ok) return { ok: false, errors: locate(compiled.errors, text, path) };
  const warnings = routeWarnings(compiled.table, file);
  return { ok: true, table: compiled.table, file, warnings: warnings.length === 0 ? [] : locate(warnings, text, path, shaped.doc, shaped.lines) };
}

/** The file's text, or why it cannot be had. */
export function readRoutesText(path: string): string | LocatedRouteError {
  const problem = (message: string): LocatedRouteError => ({ file: path, line: undefined, pointer: undefined, message });
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    return problem(`cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (bytes.length > MAX_ROUTES_FILE_BYTES) return problem(`is larger than ${MAX_ROUTES_FILE_BYTES} bytes`);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return problem('is not UTF-8 text');
  }
}

/** YAML and the schema only: every error of both at once (loadRoutesText adds the compiler's). */
export function parseRoutesText(text: string, path: string): ParseResult {
  const shaped = shapeOf(text, path);
  if ('located' in shaped) return { ok: false, errors: shaped.located };
  if (shaped.schemaErrors === undefined) return { ok: true, file: shaped.value as RoutesFile };
  return { ok: false, errors: locate(schemaErrors(shaped.schemaErrors), text, path, shaped.doc, shaped.lines) };
}

/** The file's value and the schema's raw errors (undefined: none), or its YAML errors already placed. */
type Shaped = { located: LocatedRouteError[] } | { value: unknown; schemaErrors: ErrorObject[] | undefined; doc: Document; lines: LineCounter };

function shapeOf(text: string, path: string): Shaped {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true, version: '1.2', schema: 'core', merge: false });
  // Warnings (an unknown tag, say) are errors too: a file that YAML reads two ways is not one to serve.
  const yamlErrors = [...doc.errors, ...doc.warnings];
  if (yamlErrors.length > 0) {
    return {
      located: yamlErrors.map((error) => ({
        file: path,
        line: error.linePos?.[0].line ?? (error.pos[0] >= 0 ? lines.linePos(error.pos[0]).line : undefined),
        pointer: undefined,
        message: `YAML: ${error.message.split('\n', 1)[0]!.replace(/ at line \d+, column \d+:?$/, '')}`,
      })),
    };
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    // Too many aliases (a "billion laughs"), or an alias to nothing.
    return { located: [{ file: path, line: undefined, pointer: undefined, message: `YAML: ${(error as Error).message.split('\n', 1)[0]}` }] };
  }
  const validate = validator();
  return { value, schemaErrors: validate(value) ? undefined : [...(validate.errors ?? [])], doc, lines };
}

/** `FILE:LINE: /pointer: what is wrong`, one line. */
export function formatRouteError(error: LocatedRouteError): string {
  const place = error.line === undefined ? error.file : `${error.file}:${error.line}`;
  if (error.pointer === undefined) return `${place}: ${error.message}`;
  return `${place}: ${error.pointer === '' ? '/' : error.pointer}: ${error.message}`;
}

let compiled: ReturnType<Ajv['compile']> | undefined;
function validator(): ReturnType<Ajv['compile']> {
  // allErrors: every mistake of the file in one run. verbose: each error carries its schema, so
  // an unknown key can be answered with the keys that are allowed there.
  compiled ??= new Ajv({ allErrors: true, verbose: true, strict: true }).compile(routesSchemaJson());
  return compiled;
}

/**
 * ajv's errors in the words of docs/routes.md, one per place: a union's (credentials) branches
 * become one message; a pattern is said as what it asks for.
 */
function schemaErrors(raw: readonly ErrorObject[]): RouteFileError[] {
  const unions = raw.filter((e) => e.keyword === 'anyOf').map((e) => e.schemaPath);
  const out: RouteFileError[] = [];
  const seen = new Set<string>();
  const push = (pointer: string, message: string) => {
    const key = `${pointer}\n${message}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push({ pointer, message });
    }
  };
  for (const error of raw) {
    // A union's branches each fail in their own words; the union says it once.
    if (unions.some((u) => error.schemaPath.startsWith(`${u}/`))) continue;
    const at = error.instancePath;
    const field = at.slice(at.lastIndexOf('/') + 1);
    const data: unknown = error.data;
    switch (error.keyword) {
      case 'additionalProperties': {
        const key = String(error.params.additionalProperty);
        const allowed = Object.keys((error.parentSchema as { properties?: object }).properties ?? {});
        if (at.endsWith('/methods') && key === 'HEAD') push(`${at}/HEAD`, 'HEAD is never listed: it goes with GET');
        else push(`${at}/${escapePointer(key)}`, `unknown key "${key}"${allowed.length > 0 ? ` (${where(at)} takes ${allowed.join(', ')})` : ''}`);
        break;
      }
      case 'required':
        push(`${at}/${escapePointer(String(error.params.missingProperty))}`, `is required${at === '' ? '' : ` (${where(at)} needs ${((error.parentSchema as { required?: string[] }).required ?? []).join(', ')})`}`);
        break;
      case 'propertyNames':
        // The name's own error (pattern, maxLength) comes first with the name; this one adds nothing.
        break;
      case 'anyOf': {
        const branches = (error.parentSchema as { anyOf?: { const?: unknown }[] }).anyOf ?? [];
        if (field === 'credentials') push(at, 'must be none, or a list of login_token, api_key and issuer:NAME (each once)');
        else if (field === 'organization') push(at, 'must be {claim: NAME} or {fixed: ORGANIZATION_ID}');
        else if (/^\/plans\/[^/]+\/scopes$/.test(at)) push(at, 'must be all, or a list of declared scopes (each once)');
        else if (branches.length > 0 && branches.every((b) => typeof b.const === 'string')) push(at, `${JSON.stringify(data)} is not one of ${branches.map((b) => String(b.const)).join(', ')}`);
        else push(at, 'is not one of the forms allowed here');
        break;
      }
      case 'const':
        if (at === '/version') push(at, `version ${JSON.stringify(data)} is not supported: this gateway reads version 1`);
        else push(at, `must be ${JSON.stringify(error.params.allowedValue)}`);
        break;
      case 'enum':
        push(at, `must be one of ${(error.params.allowedValues as unknown[]).map(String).join(', ')}`);
        break;
      case 'type':
        push(at, `must be ${article(String(error.params.type))}${at === '' ? ' with version and routes' : ''}`);
        break;
      case 'pattern':
      case 'maxLength':
      case 'minLength': {
        const name = (error as { propertyName?: string }).propertyName;
        if (name !== undefined) push(`${at}/${escapePointer(name)}`, nameProblem(at, name));
        else push(at, valueProblem(at, field, typeof data === 'string' ? data : String(data), error));
        break;
      }
      case 'minimum':
      case 'maximum':
        push(at, `must be ${error.keyword === 'minimum' ? 'at least' : 'at most'} ${String(error.params.limit)}`);
        break;
      case 'minItems':
        push(at, 'must list at least one');
        break;
      case 'uniqueItems':
        push(at, /^\/plans\//.test(at) ? 'lists one scope twice' : 'lists one kind twice');
        break;
      case 'minProperties':
        push(at, 'must list at least one method (GET, POST, PUT, PATCH, DELETE, OPTIONS)');
        break;
      default:
        push(at, error.message ?? 'is not valid');
    }
  }
  return out;
}

/** What the object at a pointer is, in words. */
function where(at: string): string {
  if (at === '') return 'the file';
  if (/^\/routes\/\d+$/.test(at)) return 'a route';
  if (/^\/routes\/\d+\/methods$/.test(at)) return 'methods';
  if (/^\/upstreams\/[^/]+$/.test(at)) return 'an upstream';
  if (/^\/issuers\/[^/]+$/.test(at)) return 'an issuer';
  if (/^\/plans\/[^/]+$/.test(at)) return 'a plan';
  if (/^\/plans\/[^/]+\/quota$/.test(at)) return 'a quota';
  return 'this';
}

function article(type: string): string {
  if (type === 'object') return 'a mapping';
  if (type === 'array') return 'a list';
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/** A key that is a name (an upstream's, a scope's) and is not one. */
function nameProblem(at: string, name: string): string {
  if (at === '/issuers') return `issuer name "${name}" must be lower-case letters, digits, _ and -, starting with a letter or digit, at most 40 characters`;
  if (at === '/scopes') return `scope name "${name}" is not resource:action (lower-case letters, digits, _ and -; e.g. invoices:read; at most 64 characters)`;
  return `name "${name}" must be lower-case letters, digits, _ . and -, starting with a letter or digit, at most ${MAX_NAME_LENGTH} characters`;
}

/** A string value of the wrong form, said as compile.ts would say it. */
function valueProblem(at: string, field: string, value: string, error: ErrorObject): string {
  if (field === 'path') return `path "${value}" ${pathProblem(value) ?? 'is not a path this gateway can match'}`;
  if (field === 'rateLimit') return `"${value}" is not ${RATE_LIMIT_FORM}`;
  if (field === 'id' || field === 'upstream' || field === 'weakens' || at === '/defaultPlan') return nameProblem(at, value);
  if (/^\/plans\/[^/]+\/scopes\/\d+$/.test(at)) return `"${value}" is not a scope name (resource:action, e.g. invoices:read)`;
  if (/\/methods\/[A-Z]+$/.test(at)) {
    return isScopeName(value) ? `scope "${value}" is longer than 64 characters` : `"${value}" is not a scope name (resource:action, e.g. invoices:read) nor public`;
  }
  if (error.keyword === 'maxLength') return `is longer than ${String(error.params.limit)} characters`;
  if (error.keyword === 'minLength') return 'must not be empty';
  return error.message ?? 'is not valid';
}

/** Each error with its file and line: the line of the node its pointer names, or of the nearest node above it that exists. */
function locate(errors: readonly RouteFileError[], text: string, path: string, doc?: Document, lines?: LineCounter): LocatedRouteError[] {
  if (doc === undefined || lines === undefined) {
    lines = new LineCounter();
    doc = parseDocument(text, { lineCounter: lines, version: '1.2', schema: 'core', merge: false });
  }
  const located = errors.map((error) => ({ error, offset: offsetOf(doc, error.pointer) }));
  // In the order of the file, as a reader goes through it.
  located.sort((a, b) => (a.offset ?? 0) - (b.offset ?? 0));
  return located.map(({ error, offset }) => ({ file: path, line: offset === undefined ? undefined : lines.linePos(offset).line, pointer: error.pointer, message: error.message }));
}

/**
 * Where in the text a JSON pointer lands: a map's key where the pointer's last step is a key (an
 * unknown key is shown on its own line), the item of a list, else the deepest node that exists.
 */
function offsetOf(doc: Document, pointer: string): number | undefined {
  let node: unknown = doc.contents;
  let offset = rangeStart(node) ?? 0;
  const steps = pointer === '' ? [] : pointer.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  for (const step of steps) {
    if (isAlias(node)) node = node.resolve(doc);
    if (isMap(node)) {
      const pair = node.items.find((p) => (isScalar(p.key) ? String(p.key.value) : String(p.key)) === step);
      if (pair === undefined) return offset;
      offset = rangeStart(pair.key) ?? offset;
      node = pair.value;
      // A value on the key's line (or a block below it) is placed by its key; a scalar by itself.
      if (isScalar(node)) offset = rangeStart(node) ?? offset;
    } else if (isSeq(node)) {
      const item: unknown = node.items[Number(step)];
      if (item === undefined) return offset;
      node = item;
      offset = rangeStart(node) ?? offset;
    } else return offset;
  }
  return offset;
}

function rangeStart(node: unknown): number | undefined {
  return node !== null && typeof node === 'object' && 'range' in node ? (node as Node).range?.[0] : undefined;
}
