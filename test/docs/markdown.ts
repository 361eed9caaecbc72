import { expect } from 'vitest'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'

/** What the docs tests read of a markdown file: its lines outside fenced code, and its fenced blocks. */

export interface Fence {
  /** the info string's first word after the opening fence (`sh`, `js`, or '') */
  info: string
  /** the rest of the info string (`file=src/x.ts`), trimmed */
  meta: string
  text: string
  /** 1-based line of the opening fence */
  line: number
}

/** Fenced code blocks (``` or ~~~, three or more), in order. */
export function fences(markdown: string): Fence[] {
  const found: Fence[] = []
  let open: { marker: string; indent: number; info: string; meta: string; line: number; body: string[] } | undefined
  markdown.split('\n').forEach((line, index) => {
    if (open === undefined) {
      const start = /^( *)(`{3,}|~{3,})\s*([^`\s]*)([^`]*)/.exec(line)
      if (start !== null) open = { marker: start[2] ?? '```', indent: (start[1] ?? '').length, info: start[3] ?? '', meta: (start[4] ?? '').trim(), line: index + 1, body: [] }
      return
    }
    const closing = new RegExp(`^ *${open.marker[0] === '`' ? '`' : '~'}{${open.marker.length},}\\s*$`)
    if (closing.test(line)) {
      found.push({ info: open.info, meta: open.meta, text: open.body.join('\n'), line: open.line })
      open = undefined
    } else {
      // A fence inside a list item is indented: its lines lose that indentation.
      open.body.push(line.slice(Math.min(open.indent, line.length - line.trimStart().length)))
    }
  })
  return found
}

/** The file's lines with fenced code blanked (kept as empty lines, so line numbers stay right). */
export function proseLines(markdown: string): string[] {
  const lines = markdown.split('\n')
  const inCode = new Set<number>()
  for (const fence of fences(markdown)) {
    const bodyLines = fence.text === '' ? 0 : fence.text.split('\n').length
    // the opening fence, its body and the closing fence
    for (let i = fence.line - 1; i <= fence.line + bodyLines; i++) inCode.add(i)
  }
  return lines.map((line, i) => (inCode.has(i) ? '' : line))
}

/** GitHub's heading anchor: lower case, only letters, digits, spaces, hyphens and underscores kept, spaces to hyphens. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link in a heading anchors on its text
    .replace(/<[^>]+>/g, '')
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-')
}

/** Every anchor a link into this file may name: heading slugs (repeats get -1, -2, …) and `<a id|name="…">`. */
export function anchors(markdown: string): Set<string> {
  const found = new Set<string>()
  const seen = new Map<string, number>()
  for (const line of proseLines(markdown)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (heading !== null) {
      const base = slug(heading[1] ?? '')
      const count = seen.get(base) ?? 0
      seen.set(base, count + 1)
      found.add(count === 0 ? base : `${base}-${count}`)
    }
    for (const match of line.matchAll(/<a\s[^>]*\b(?:id|name)\s*=\s*["']([^"']+)["']/gi)) found.add(match[1] ?? '')
  }
  return found
}

export interface Link {
  target: string
  line: number
}

/** Inline links and images `[text](target)` / `![alt](target "title")`, and reference definitions `[x]: target`, outside code. */
export function links(markdown: string): Link[] {
  const found: Link[] = []
  proseLines(markdown).forEach((raw, index) => {
    const line = raw.replace(/(`+)[^`]*?\1/g, (span) => ' '.repeat(span.length)) // code spans are not links
    for (const match of line.matchAll(/\]\(\s*(<[^>]*>|[^\s)]+)(?:\s+["'(][^)]*)?\)/g)) {
      found.push({ target: (match[1] ?? '').replace(/^<(.*)>$/, '$1'), line: index + 1 })
    }
    const definition = /^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/.exec(line)
    if (definition !== null) found.push({ target: (definition[1] ?? '').replace(/^<(.*)>$/, '$1'), line: index + 1 })
  })
  return found
}

/**
 * The problems of a markdown file's links, one line each (`file:line: target: why`): a relative
 * target that does not exist in the repository, or an anchor no heading of its file has.
 * Addresses with a scheme (http:, https:, mailto:, …) are not checked.
 */
export function brokenLinks(root: string, file: string): string[] {
  const markdown = readFileSync(file, 'utf8')
  const problems: string[] = []
  const where = (link: Link) => `${relative(root, file)}:${link.line}: ${link.target}`
  for (const link of links(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) continue
    const hash = link.target.indexOf('#')
    const pathPart = decodeURIComponent(hash === -1 ? link.target : link.target.slice(0, hash))
    const anchor = hash === -1 ? undefined : decodeURIComponent(link.target.slice(hash + 1))
    // GitHub reads a leading / from the repository's root.
    const path = pathPart === '' ? file : pathPart.startsWith('/') ? join(root, pathPart) : join(dirname(file), pathPart)
    if (!existsSync(path)) {
      problems.push(`${where(link)}: ${relative(root, path)} does not exist`)
      continue
    }
    if (!path.startsWith(root)) {
      problems.push(`${where(link)}: ${path} is outside the repository`)
      continue
    }
    if (anchor === undefined) continue
    if (!path.endsWith('.md') || statSync(path).isDirectory()) {
      problems.push(`${where(link)}: an anchor into ${relative(root, path)}, which is not a markdown file`)
      continue
    }
    if (!anchors(readFileSync(path, 'utf8')).has(anchor)) {
      problems.push(`${where(link)}: no heading or <a id> "${anchor}" in ${relative(root, path)}`)
    }
  }
  return problems
}

/**
 * The section of `markdown` that starts with the heading `heading` (its whole line, e.g.
 * "## Quickstart" or "### Walk-through: …" by its start), up to the next heading of the same
 * level; fails the test when there is none.
 */
export function sectionOf(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n${heading}`) + 1
  expect(start, `a "${heading}" section`).toBeGreaterThan(0)
  const level = heading.slice(0, heading.indexOf(' ') + 1)
  const end = markdown.indexOf(`\n${level}`, start + 1)
  return markdown.slice(start, end === -1 ? undefined : end)
}

