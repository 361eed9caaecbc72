// vitest: sqlite project only — the guide's resource is followed in a copy whose tests run on SQLite.
import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { fences } from './markdown.js'

/**
 * docs/architecture.md's "How to add a resource", followed as written: in a copy of the project,
 * every block marked `file=PATH` is written to PATH and every block marked `edit=PATH` applied to
 * it, then the commands the guide names run (the catalogue script, typecheck, and the tests that
 * hold every resource to its declarations). It fails when the guide and the code disagree, and it
 * says which files a new resource touches. It costs about two minutes: one typecheck and one vitest
 * run of a few files in a child process, on SQLite only.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const GUIDE = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8')
const SECTION = GUIDE.slice(GUIDE.indexOf('## How to add a resource'), GUIDE.indexOf('\n## ', GUIDE.indexOf('## How to add a resource') + 1))

/** The tests the guide says a new resource must pass, beside its own. */
const TESTS = ['test/architecture', 'test/resources/manifests.test.ts', 'test/auth/security-kit.test.ts', 'test/docs/catalogues.test.ts', 'test/openapi/events.test.ts', 'test/openapi/operation-ids.test.ts', 'test/openapi/generated-client.test.ts']

const copy = mkdtempSync(join(tmpdir(), 'add-a-resource-'))
afterAll(() => rmSync(copy, { recursive: true, force: true }))

function run(command: string, args: string[]): { status: number | null; output: string } {
  const env: NodeJS.ProcessEnv = {}
  // The child is a vitest of its own: it must not think it is one of this run's workers.
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('VITEST') && name !== 'TEST_BACKEND' && name !== 'NODE_OPTIONS') env[name] = value
  const result = spawnSync(command, args, { cwd: copy, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  return { status: result.status, output: `${result.stdout}${result.stderr}` }
}

/** Applies an `edit=` block: its import lines go after the file's last import, and a line `export const NAME … = [..., x]` appends x to that list. */
function applyEdit(text: string, edit: string): string {
  const lines = text.split('\n')
  for (const line of edit.split('\n').filter((line) => line.trim() !== '')) {
    if (line.startsWith('import ')) {
      const lastImport = lines.reduce((last, candidate, index) => (candidate.startsWith('import ') ? index : last), -1)
      lines.splice(lastImport + 1, 0, line)
      continue
    }
    const appended = /^(export const \w+)\b.*\[\.\.\., (.+)\]$/.exec(line)
    if (appended === null) throw new Error(`an edit block line the test cannot apply: ${line}`)
    const index = lines.findIndex((candidate) => candidate.startsWith(`${appended[1]}:`) || candidate.startsWith(`${appended[1]} `))
    if (index === -1 || !(lines[index] ?? '').endsWith(']')) throw new Error(`no one-line list ${appended[1]} to append to`)
    lines[index] = `${(lines[index] ?? '').slice(0, -1)}, ${appended[2]}]`
  }
  return lines.join('\n')
}

describe("docs/architecture.md's How to add a resource, followed in a copy of the project", () => {
  it('gives a resource that typechecks and passes the tests every resource is held to, touching only its folders, one list and the generated catalogues', { timeout: 900_000 }, () => {
    const blocks = fences(SECTION).filter((fence) => /^(?:file|edit)=/.test(fence.meta))
    expect(blocks.length).toBeGreaterThan(5)

    const tracked = spawnSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).stdout.split('\0').filter((path) => path !== '')
    for (const path of tracked) {
      mkdirSync(dirname(join(copy, path)), { recursive: true })
      copyFileSync(join(ROOT, path), join(copy, path))
    }
    symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(copy, 'node_modules'))
    const git = (...args: string[]) => spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: copy, encoding: 'utf8' })
    git('init', '-q')
    git('add', '-A')
    git('commit', '-q', '-m', 'before')

    for (const block of blocks) {
      const [kind, path = ''] = block.meta.split('=')
      const target = join(copy, path)
      if (kind === 'file') {
        mkdirSync(dirname(target), { recursive: true })
        writeFileSync(target, `${block.text}\n`)
      } else {
        writeFileSync(target, applyEdit(readFileSync(target, 'utf8'), block.text))
      }
    }

    const catalogues = run(process.execPath, ['node_modules/tsx/dist/cli.mjs', 'scripts/docs-catalogues.ts'])
    expect(catalogues.status, catalogues.output).toBe(0)

    git('add', '-A')
    const touched = git('diff', '--cached', '--name-status', 'HEAD').stdout.trim().split('\n')
    const outsideItsFolders = touched.filter((line) => !/\t(?:src|test)\/resources\/notes\//.test(line))
    expect(outsideItsFolders).toEqual(['M\tdocs/api.md', 'M\tdocs/webhook-delivery.md', 'M\tsrc/resources/index.ts'])
    expect(touched.filter((line) => line.startsWith('A\t')).length).toBe(touched.length - 3)

    const typecheck = run(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json', '--noEmit'])
    expect(typecheck.status, typecheck.output).toBe(0)

    const tests = run(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', '--project', 'sqlite', ...TESTS, 'test/resources/notes'])
    expect(tests.status, tests.output).toBe(0)
    expect(tests.output).toMatch(/test\/resources\/notes\//)
  })
})
