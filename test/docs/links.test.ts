// vitest: sqlite project only — the documents' links, no backend.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { cleanUp, ROOT, tempDir } from '../processes.js'
import { anchors, brokenLinks, links, slug } from './markdown.js'

afterAll(cleanUp)

const ROOT_DIR = ROOT.replace(/\/$/, '')
const FILES = ['README.md', ...readdirSync(join(ROOT_DIR, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)]

describe('every link in README.md and docs/*.md resolves inside the repository', () => {
  it.each(FILES)('%s', (file) => {
    expect(brokenLinks(ROOT_DIR, join(ROOT_DIR, file))).toEqual([])
  })

  it('the check sees the README\'s links (so an empty pass means something)', () => {
    const targets = links(readFileSync(join(ROOT_DIR, 'README.md'), 'utf8')).map((link) => link.target)
    expect(targets).toEqual(expect.arrayContaining(['docs/api.md', 'docs/cli.md', 'docs/webhook-delivery.md#ssrf', '#quickstart']))
  })
})

describe('the link check itself', () => {
  /** A small repository: README.md and docs/guide.md with the given texts; returns the problems of README.md. */
  function check(readme: string, guide = '# Guide\n\n## Set-up: the `npm` part (v2)\n\n## Twice\n\n## Twice\n\n<a id="custom-anchor"></a>\n'): string[] {
    const root = tempDir('devplatform-links-')
    mkdirSync(join(root, 'docs'))
    writeFileSync(join(root, 'README.md'), readme)
    writeFileSync(join(root, 'docs', 'guide.md'), guide)
    writeFileSync(join(root, 'logo.png'), '')
    return brokenLinks(root, join(root, 'README.md'))
  }

  it('names a relative target that does not exist, with its line', () => {
    const problems = check('# Readme\n\nSee [the guide](docs/guide.md) and\n[the other](docs/missing.md).\n')
    expect(problems).toHaveLength(1)
    expect(problems[0]).toMatch(/^README\.md:4: docs\/missing\.md: /)
  })

  it('names an image that does not exist, and passes one that does', () => {
    expect(check('![logo](logo.png) ![gone](img/gone.png "title")\n')).toEqual([expect.stringContaining('img/gone.png')])
  })

  it('names an anchor that matches no heading of the linked file', () => {
    const problems = check('[a](docs/guide.md#set-up-the-npm-part-v2) [b](docs/guide.md#twice-1) [c](docs/guide.md#custom-anchor) [d](docs/guide.md#setup)\n')
    expect(problems).toEqual([expect.stringContaining('docs/guide.md#setup')])
  })

  it('checks a bare #anchor against the file\'s own headings', () => {
    expect(check('# Readme\n\n## Quick start!\n\n[ok](#quick-start) [bad](#quickstart)\n')).toEqual([expect.stringContaining('#quickstart')])
  })

  it('skips http(s): and mailto: addresses, fenced code and code spans', () => {
    expect(check('[w](https://example.com/x.md) [m](mailto:a@example.com) `[c](nope.md)`\n\n```md\n[f](nope.md)\n```\n')).toEqual([])
  })

  it('reads reference definitions too', () => {
    expect(check('[guide][g]\n\n[g]: docs/nope.md\n')).toEqual([expect.stringContaining('docs/nope.md')])
  })

  it('slugs as GitHub does', () => {
    expect(slug('bench:api: request rates against the `/hello` floor')).toBe('benchapi-request-rates-against-the-hello-floor')
    expect(slug('Idempotent requests (`Idempotency-Key`)')).toBe('idempotent-requests-idempotency-key')
    expect(slug('snake_case and Ünïcode')).toBe('snake_case-and-ünïcode')
    expect([...anchors('# A\n# A\n```\n# not a heading\n```\n')]).toEqual(['a', 'a-1'])
  })
})
