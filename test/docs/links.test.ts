/**
 * Every relative link in the README, docs/ and the chart's README points at a file that exists and,
 * for a `#fragment` into a Markdown file, at a heading that file has (as GitHub names its anchors).
 * Sections move between these files (issue 29 moved most of the README into docs/); a link left
 * pointing at the old place fails here, not in a reader's browser.
 */
import t from 'tap';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The Markdown without its fenced code blocks and inline code spans, where `[a](b)` is no link. */
function prose(markdown: string): string {
  const out: string[] = [];
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence !== undefined) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      out.push('');
    } else if (marker !== undefined) {
      fence = marker;
      out.push('');
    } else out.push(line.replace(/(`+)[^`]*?\1/g, ''));
  }
  return out.join('\n');
}

/** GitHub's anchor for a heading's text: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]*>/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a Markdown file's headings; a repeated heading gets -1, -2… as on GitHub. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const line of prose(markdown).split('\n')) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

/** Inline links and images: `[text](target)` and `![alt](target)`, the target without a title. */
function links(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
}

/** What is wrong with each relative link of `file` (a path under ROOT), in words; empty when none. */
function brokenLinks(file: string, read: (path: string) => string | undefined = readIfPresent): string[] {
  const text = read(file);
  if (text === undefined) return [`${file} does not exist`];
  const problems: string[] = [];
  for (const target of links(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue; // https:, mailto:…
    const hash = target.indexOf('#');
    const path = hash < 0 ? target : target.slice(0, hash);
    const fragment = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
    const resolved = path === '' ? file : relative(ROOT, join(ROOT, dirname(file), decodeURIComponent(path)));
    if (resolved.startsWith('..')) {
      problems.push(`${file}: ${target} leaves the repository`);
      continue;
    }
    const targetText = read(resolved);
    if (targetText === undefined && !existsSync(join(ROOT, resolved))) {
      problems.push(`${file}: ${target} points at ${resolved}, which does not exist`);
      continue;
    }
    if (fragment === undefined || fragment === '' || !resolved.endsWith('.md')) continue;
    if (targetText === undefined || !anchors(targetText).has(fragment)) problems.push(`${file}: ${target}: ${resolved} has no heading #${fragment}`);
  }
  return problems;
}

function readIfPresent(path: string): string | undefined {
  const full = join(ROOT, path);
  try {
    return readFileSync(full, 'utf8');
  } catch {
    return undefined;
  }
}

const documents = ['README.md', 'charts/authgate/README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

t.test('every relative link of the README and docs/ reaches a file and, with a #fragment, a heading', async (t) => {
  t.ok(documents.length >= 8, `the documents are found (${documents.join(', ')})`);
  let checked = 0;
  for (const file of documents) {
    checked += links(readIfPresent(file) ?? '').length;
    t.strictSame(brokenLinks(file), [], `${file}: every link resolves`);
  }
  t.ok(checked > 50, `links were found to check (${checked})`);
});

t.test('the checker itself: anchors as GitHub names them, and a broken link is caught', async (t) => {
  t.equal(slug('Browser apps (CORS)'), 'browser-apps-cors');
  t.equal(slug("What the upstream's answer headers become"), 'what-the-upstreams-answer-headers-become');
  t.equal(slug('Your own API: the routes file'), 'your-own-api-the-routes-file');
  t.equal(slug('The `x-authgate-identity` header'), 'the-x-authgate-identity-header');
  t.equal(slug('Where a forwarded request’s time goes (issue 18)'), 'where-a-forwarded-requests-time-goes-issue-18');

  const files: Record<string, string> = {
    'docs/a.md': [
      '# A',
      '## Twice',
      '## Twice',
      '```sh',
      '# not a heading',
      '[not a link](nowhere.md)',
      '```',
      'See [b](b.md#real), [b again](b.md#gone), [self](#twice-1), [self wrong](#not-a-heading),',
      '[missing](missing.md), [out](../../etc/passwd), [web](https://example.com/x#y), `[code](nowhere.md)`',
      'and ![img](b.png) and [multi',
      'line](b.md).',
    ].join('\n'),
    'docs/b.md': '# B\n\n## Real\n',
    'docs/b.png': 'png',
  };
  const read = (path: string) => files[path];
  t.strictSame(
    brokenLinks('docs/a.md', read),
    [
      'docs/a.md: b.md#gone: docs/b.md has no heading #gone',
      'docs/a.md: #not-a-heading: docs/a.md has no heading #not-a-heading',
      'docs/a.md: missing.md points at docs/missing.md, which does not exist',
      'docs/a.md: ../../etc/passwd leaves the repository',
    ],
    'exactly the broken ones: code blocks, code spans and web links are not checked',
  );
});
