// Code that cites docs/domain.md names one of its headings, so the citation resolves in any clone:
// `docs/domain.md, "The readiness gate"`, or several as `docs/domain.md, "A" and "B"`. A citation by section
// number, or of a heading the file does not have (renamed, say), fails here.

import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.join(import.meta.dirname, '..');
const DOC = 'docs/domain.md';
/** Where code lives, and what counts as code: sources, tests, scripts and the simulator's scenario files. */
const CODE_DIRS = ['app', 'bench', 'components', 'deploy', 'e2e', 'lib', 'scripts', 'server', 'sim'];
const CODE_FILE = /\.(?:[cm]?[jt]sx?|ya?ml)$/;
const NOT_CODE = new Set(['node_modules', '.next']);
const SELF = path.relative(ROOT, import.meta.filename);

function codeFiles(): string[] {
  const top = readdirSync(ROOT, { withFileTypes: true })
    .filter((e) => e.isFile() && CODE_FILE.test(e.name))
    .map((e) => e.name);
  const nested = CODE_DIRS.flatMap((dir) =>
    readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
      .map((f) => path.join(dir, f))
      .filter((f) => CODE_FILE.test(f) && !f.split(path.sep).some((part) => NOT_CODE.has(part))),
  );
  return [...top, ...nested].filter((f) => f !== SELF).sort();
}

/** The headings of a Markdown text, without their `#`s; lines inside fenced code blocks are not headings. */
function headingsOf(markdown: string): string[] {
  const headings: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const m = fenced ? null : /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (m?.[1]) headings.push(m[1]);
  }
  return headings;
}

/**
 * The first heading after `docs/domain.md, `, then each further one after `, ` or ` and `. A list may go on to the
 * comment's next line (after its `//`, `*` or `#`); a heading itself stays on one line, so a search finds it.
 */
const FIRST = /,\s*(?:(?:\/\/|\*|#)\s*)?"([^"\n]+)"/y;
const NEXT = /(?:,\s*(?:and\s+)?|\s+and\s+)(?:(?:\/\/|\*|#)\s*)?"([^"\n]+)"/y;

/** What is wrong with each mention of domain.md in a file's text, as `file:line: problem`; empty when all resolve. */
function citationProblems(file: string, text: string, headings: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  for (const m of text.matchAll(/domain\.md/g)) {
    const at = `${file}:${text.slice(0, m.index).split('\n').length}`;
    if (!text.slice(0, m.index).endsWith('docs/')) {
      problems.push(`${at}: cite it as ${DOC} (the path from the repository's root)`);
      continue;
    }
    const cited: string[] = [];
    let re = FIRST;
    re.lastIndex = m.index + 'domain.md'.length;
    for (let c = re.exec(text); c; c = re.exec(text)) {
      cited.push(c[1] as string);
      NEXT.lastIndex = re.lastIndex;
      re = NEXT;
    }
    if (cited.length === 0) problems.push(`${at}: names no heading; write ${DOC}, "<heading>"`);
    for (const h of cited) if (!headings.has(h)) problems.push(`${at}: ${DOC} has no heading "${h}"`);
  }
  for (const m of text.matchAll(/§\s*\d/g)) {
    const at = `${file}:${text.slice(0, m.index).split('\n').length}`;
    problems.push(`${at}: a section number; cite ${DOC} by heading, which a renumbering does not break`);
  }
  return problems.sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
}

const docHeadings = headingsOf(readFileSync(path.join(ROOT, DOC), 'utf8'));

describe(`citations of ${DOC}`, () => {
  it('name a heading the file has, in every code file', () => {
    const headings = new Set(docHeadings);
    const files = codeFiles().map((f) => ({ file: f, text: readFileSync(path.join(ROOT, f), 'utf8') }));
    const citing = files.filter((f) => f.text.includes('domain.md') || f.text.includes('§'));
    // The code does cite it (a scan that found no files would pass for nothing).
    expect(citing.length).toBeGreaterThan(10);
    expect(citing.flatMap((f) => citationProblems(f.file, f.text, headings))).toEqual([]);
  });

  it('fail when the cited heading is renamed, and for a citation by section number', () => {
    const doc = (gate: string) =>
      ['# Domain facts', '## Pause', `### ${gate}`, '```', '## Not a heading', '```'].join('\n');
    const code = [
      '// Gate closed (docs/domain.md, "The readiness gate").',
      '// Per docs/domain.md, "Pause" and "The readiness gate".',
      '// Old style: domain.md §1.2.',
      '// No heading: docs/domain.md §1.2.',
      '// A list over two lines (docs/domain.md, "Pause" and',
      '// "The readiness gate"), and a fenced line (docs/domain.md, "Not a heading").',
    ].join('\n');
    const problems = (markdown: string) => citationProblems('x.ts', code, new Set(headingsOf(markdown)));
    expect(problems(doc('The readiness gate'))).toEqual([
      'x.ts:3: a section number; cite docs/domain.md by heading, which a renumbering does not break',
      "x.ts:3: cite it as docs/domain.md (the path from the repository's root)",
      'x.ts:4: a section number; cite docs/domain.md by heading, which a renumbering does not break',
      'x.ts:4: names no heading; write docs/domain.md, "<heading>"',
      'x.ts:6: docs/domain.md has no heading "Not a heading"',
    ]);
    expect(problems(doc('The infrastructure gate'))).toEqual([
      'x.ts:1: docs/domain.md has no heading "The readiness gate"',
      'x.ts:2: docs/domain.md has no heading "The readiness gate"',
      'x.ts:3: a section number; cite docs/domain.md by heading, which a renumbering does not break',
      "x.ts:3: cite it as docs/domain.md (the path from the repository's root)",
      'x.ts:4: a section number; cite docs/domain.md by heading, which a renumbering does not break',
      'x.ts:4: names no heading; write docs/domain.md, "<heading>"',
      'x.ts:5: docs/domain.md has no heading "The readiness gate"',
      'x.ts:6: docs/domain.md has no heading "Not a heading"',
    ]);
  });

  it('has headings that are each unique, so a citation names one section', () => {
    const seen = new Set<string>();
    const twice = docHeadings.filter((h) => seen.size === seen.add(h).size);
    expect(docHeadings.length).toBeGreaterThan(0);
    expect(twice).toEqual([]);
  });
});
