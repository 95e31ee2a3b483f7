/**
 * docs/admin.md lists the OpenAPI documents' fixed operationIds for client generators; the list had
 * fallen behind the code (issue 46: no password, organization, second-factor or scope operation).
 * Every operationId the code names must be in it, and nothing the code does not name.
 */
import t from 'tap';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : name.endsWith('.ts') ? [path] : [];
  });
}

t.test('docs/admin.md names every fixed operationId of the code, and no other', async (t) => {
  const inCode = new Set<string>();
  for (const file of sources(join(ROOT, 'src'))) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/operationId: (?:opts\.public \? )?'(\w+)'(?: : '(\w+)')?/g)) {
      inCode.add(m[1]!);
      if (m[2]) inCode.add(m[2]);
    }
  }
  t.ok(inCode.size > 30, `the code's operationIds were found (${inCode.size})`);
  const doc = readFileSync(join(ROOT, 'docs', 'admin.md'), 'utf8');
  const paragraph = doc.slice(doc.indexOf('`operationId` for client generators'), doc.indexOf('Each operation lists the problems'));
  for (const id of inCode) t.ok(paragraph.includes(`\`${id}\``), `${id} is listed`);
  // The forwarded routes' ids are made from method and path (src/openapi/document.ts): the built-in table's examples.
  const listed = [...paragraph.matchAll(/`([a-z][A-Za-z]+)`/g)].map((m) => m[1]!).filter((id) => id !== 'operationId' && !/^(get|post|put|patch|delete|head|options)(Accounts|AccountsPath|OrganizationMe)$/.test(id));
  for (const id of listed) t.ok(inCode.has(id), `${id} is one of the code's`);
});
