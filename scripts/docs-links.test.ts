// Every link in README.md, docs/ and sim/README.md leads somewhere: a file of the repository, and a heading of it
// when the link names one (GitHub's anchors). Web links are not followed (no network here).

import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');
const DOCS = [
  'README.md',
  'sim/README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** GitHub's anchor for a heading: lower case, punctuation dropped (hyphens and underscores kept), spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a Markdown file's headings (a repeated heading gets -1, -2, … as GitHub numbers them). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const m = !fenced && /^#{1,6}\s+(.*)$/.exec(line);
    if (!m) continue;
    const base = slug(m[1] as string);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

/** The Markdown links of a file outside code blocks and inline code: [text](target). */
function links(markdown: string): string[] {
  const text = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] as string);
}

describe('documentation links', () => {
  it.each(DOCS)('%s: every link resolves', (doc) => {
    const own = readFileSync(path.join(ROOT, doc), 'utf8');
    const broken: string[] = [];
    for (const target of links(own)) {
      if (/^[a-z]+:/.test(target)) continue;
      const [file, anchor] = target.split('#') as [string, string | undefined];
      const resolved = file ? path.resolve(path.dirname(path.join(ROOT, doc)), file) : path.join(ROOT, doc);
      if (!existsSync(resolved)) {
        broken.push(`${target}: no such file`);
        continue;
      }
      if (anchor && !anchors(readFileSync(resolved, 'utf8')).has(anchor)) broken.push(`${target}: no such heading`);
    }
    expect(broken).toEqual([]);
  });

  it('catches a broken file and a broken anchor (the check bites)', () => {
    expect(anchors('# A\n## Resync: `GET` and `POST …/resync`\n## A')).toEqual(
      new Set(['a', 'resync-get-and-post-resync', 'a-1']),
    );
    expect(links('see [x](docs/nowhere.md) and `[y](not-a-link)`')).toEqual(['docs/nowhere.md']);
  });
});
