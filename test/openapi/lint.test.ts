// vitest: sqlite project only — the served document is built from the schemas, whatever the backend.
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestServer } from '../helper.js'

const run = promisify(execFile)
const REDOCLY_CLI = join(dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')), 'bin', 'cli.js')

interface LintProblem {
  ruleId: string
  severity: 'error' | 'warn'
  message: string
  location: { pointer: string }[]
}

interface LintReport {
  totals: { errors: number; warnings: number; ignored: number }
  problems: LintProblem[]
}

let server: TestServer
let directory: string
beforeAll(async () => {
  server = await startTestServer()
  directory = await mkdtemp(join(tmpdir(), 'devplatform-openapi-lint-'))
})
afterAll(async () => {
  await server.close()
  await rm(directory, { recursive: true, force: true })
})

describe('the served OpenAPI document under `redocly lint` (recommended rules)', () => {
  it('has no errors', async () => {
    const res = await server.request('GET', '/api/v0/openapi.json')
    expect(res.status).toBe(200)
    const file = join(directory, 'openapi.json')
    await writeFile(file, res.text)

    // Exit code 1 when there are errors: the report on stdout says which, so read it either way.
    const output = await run(process.execPath, [REDOCLY_CLI, 'lint', '--extends=recommended', '--format=json', file], {
      // No usage report or update check from a test (nothing is fetched at test time).
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? '', stderr: error.stderr ?? '' }))
    let report: LintReport
    try {
      report = JSON.parse(output.stdout) as LintReport
    } catch {
      throw new Error(`redocly lint printed no report:\n${output.stdout}\n${output.stderr}`)
    }
    const errors = report.problems
      .filter((problem) => problem.severity === 'error')
      .map((problem) => `${problem.ruleId} at ${problem.location.map((location) => location.pointer).join(', ')}: ${problem.message}`)
    expect(errors).toEqual([])
    expect(report.totals.errors).toBe(0)
  })
})
