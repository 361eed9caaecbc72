import { execFile, spawnSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'

const run = promisify(execFile)

/** The newest PostgreSQL installed from Debian's packages: its server binaries. */
function postgresBin(): string {
  const root = '/usr/lib/postgresql'
  const versions = existsSync(root) ? readdirSync(root).filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(b) - Number(a)) : []
  const version = versions[0]
  if (version === undefined) throw new Error(`no PostgreSQL server binaries under ${root}`)
  return join(root, version, 'bin')
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

/** PostgreSQL refuses to run as root: its commands run as the `postgres` system user when we are root. */
const AS_POSTGRES = process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--'] : []

async function asPostgres(command: string, args: string[]): Promise<string> {
  const [program, ...rest] = [...AS_POSTGRES, command, ...args]
  const { stdout } = await run(program ?? command, rest, { timeout: 60_000 })
  return stdout
}

/**
 * A PostgreSQL server of the test's own (initdb in a temporary directory, on a free port), so a
 * test can kill or stop it without touching the machine's shared server the rest of the suite uses.
 */
export class PrivatePostgres {
  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`
  }

  private get data(): string {
    return join(this.dir, 'data')
  }

  static async create(): Promise<PrivatePostgres> {
    const dir = mkdtempSync(join(tmpdir(), 'devplatform-pg-'))
    if (AS_POSTGRES.length > 0) {
      const owner = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' })
      const group = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' })
      chownSync(dir, Number(owner.stdout.trim()), Number(group.stdout.trim()))
    }
    const server = new PrivatePostgres(dir, await freePort())
    await asPostgres(join(postgresBin(), 'initdb'), ['-D', server.data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8'])
    await server.start()
    return server
  }

  /** Starts the server (again) and waits until it accepts connections. */
  async start(): Promise<void> {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`
    await asPostgres(join(postgresBin(), 'pg_ctl'), ['-D', this.data, '-o', options, '-l', join(this.dir, 'log'), '-w', '-t', '30', 'start'])
  }

  /** The postmaster's process id. */
  postmasterPid(): number {
    const firstLine = readFileSync(join(this.data, 'postmaster.pid'), 'utf8').split('\n')[0] ?? ''
    return Number(firstLine)
  }

  /** kill -9 of the postmaster: its backends exit when they notice, nothing is shut down cleanly. */
  async killPostmaster(): Promise<void> {
    const pid = this.postmasterPid()
    const { stdout } = await run('pgrep', ['-P', String(pid)]).catch(() => ({ stdout: '' }))
    const children = stdout.split('\n').filter((line) => line.trim() !== '').map(Number)
    process.kill(pid, 'SIGKILL')
    // The orphaned backends end by themselves once they notice; until then the shared memory is in use and a start fails.
    for (let i = 0; i < 400 && [pid, ...children].some(processAlive); i++) await new Promise((resolve) => setTimeout(resolve, 25))
  }

  /** pg_ctl stop -m fast: clients get "terminating connection due to administrator command". */
  async fastShutdown(): Promise<void> {
    await asPostgres(join(postgresBin(), 'pg_ctl'), ['-D', this.data, '-m', 'fast', '-w', 'stop'])
  }

  /** Ends every backend whose application_name is `applicationName` (pg_terminate_backend). */
  async terminate(applicationName: string): Promise<number> {
    const client = new pg.Client({ connectionString: this.url })
    await client.connect()
    try {
      const result = await client.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [applicationName])
      return result.rowCount ?? 0
    } finally {
      await client.end()
    }
  }

  async stop(): Promise<void> {
    await asPostgres(join(postgresBin(), 'pg_ctl'), ['-D', this.data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined)
    rmSync(this.dir, { recursive: true, force: true })
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
