import { Problem } from '../problems.js';

/**
 * Names people read (an API key's, an organization's) must show what they are. Refused anywhere
 * in a name:
 * - control characters, C0 (U+0000–001F), DEL and C1 (U+0080–009F): they break lines and
 *   terminals, and some render as nothing;
 * - bidirectional controls: the embeddings and overrides U+202A–202E, the isolates U+2066–2069,
 *   the marks U+200E, U+200F and U+061C, which reorder what is shown ("Trojan Source",
 *   CVE-2021-42574): `prod\u202Eyek` reads as another name;
 * - every other invisible format character (Unicode category Cf: U+200B zero width space, U+2060,
 *   U+FEFF, the soft hyphen, tag characters, …), the line and paragraph separators U+2028/2029, and
 *   lone surrogates. Cf is refused as a class so that a character Unicode adds later is covered;
 * - except U+200C and U+200D (zero width non-joiner and joiner): real text needs them (Persian and
 *   Indic words, emoji sequences such as a family), and they reorder nothing.
 */
const REFUSED = /[\p{Cc}\p{Cs}\u2028\u2029]|(?![\u200c\u200d])\p{Cf}/u;

/** Why `name` is refused, naming the first character it found, or undefined. */
export function displayNameProblem(field: string, name: string): string | undefined {
  const match = REFUSED.exec(name);
  if (match === null) return undefined;
  const code = match[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
  const position = [...name.slice(0, match.index)].length + 1;
  return `${field} must not contain control characters, bidirectional controls or invisible format characters (U+${code} at character ${position})`;
}

/** Throws the 400 (badRequest, 1200) when `name` has a refused character; null and undefined pass. */
export function refuseSpoofingName(field: string, name: string | null | undefined): void {
  if (typeof name !== 'string') return;
  const problem = displayNameProblem(field, name);
  if (problem !== undefined) throw new Problem('badRequest', problem, 'bad_name');
}
