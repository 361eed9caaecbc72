import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'

/**
 * A pg_auto_failover formation on this machine, as docs/several-instances.md's walk-through sets
 * it up: a monitor and two PostgreSQL 15 nodes (a primary and a synchronous standby), each run by
 * `pg_autoctl ... --run` in a temporary directory, on their own ports. pg_autoctl refuses to run
 * as root, so as root it runs as the postgres user (runuser). Each pg_autoctl runs in its own
 * process group: killing the group is a node's machine dying (keeper and postmaster at once).
 */

const run = promisify(execFile)

/** Where Debian's PostgreSQL 15 binaries are (pg_autoctl finds pg_ctl on PATH). */
export const POSTGRES_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin'

/**
 * The monitor's health checks, shortened from their defaults (a check every 5 s, a node unhealthy
 * after 20 s without reports, 30 s before a silent primary counts as demoted) so that a failover
 * takes seconds. An operator chooses these against the network's hiccups: see
 * docs/several-instances.md.
 */
export const FAST_FAILOVER_SETTINGS: Readonly<Record<string, number>> = {
  'pgautofailover.health_check_period': 1000,
  'pgautofailover.health_check_timeout': 1000,
  'pgautofailover.health_check_max_retries': 1,
  'pgautofailover.health_check_retry_delay': 500,
  'pgautofailover.node_considered_unhealthy_timeout': 3000,
  'pgautofailover.primary_demote_timeout': 5000,
}

export interface FormationNode {
  name: string
  port: number
  pgdata: string
  process: ChildProcess
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

export class PgFormation {
  readonly nodes: FormationNode[] = []
  private monitor: ChildProcess | undefined

  private constructor(
    readonly dir: string,
    readonly monitorPort: number,
    readonly nodePorts: readonly number[],
  ) {}

  /** Whether pg_autoctl and PostgreSQL 15 are installed (CI installs them: .ci/run). */
  static installed(): boolean {
    return existsSync(join(POSTGRES_BIN, 'pg_ctl')) && existsSync('/usr/bin/pg_autoctl')
  }

  /**
   * Creates and starts the monitor, then the first node (the primary), then the second (its
   * synchronous standby); resolves once the monitor reports them primary and secondary.
   */
  static async start(options: { monitorPort: number; nodePorts: readonly [number, number]; timeoutMs?: number }): Promise<PgFormation> {
    const dir = mkdtempSync(join(tmpdir(), 'pg-formation-'))
    if (process.getuid?.() === 0) chownSync(dir, ...postgresIds())
    const formation = new PgFormation(dir, options.monitorPort, options.nodePorts)
    const deadline = Date.now() + (options.timeoutMs ?? 120_000)
    try {
      formation.monitor = formation.spawn('monitor', ['create', 'monitor', '--pgdata', join(dir, 'monitor'), '--pgport', String(options.monitorPort), '--hostname', '127.0.0.1', '--auth', 'trust', '--no-ssl', '--run'])
      await formation.until(deadline, 'the monitor to answer', async () => (await formation.query(options.monitorPort, 'pg_auto_failover', "select 1 from pg_extension where extname = 'pgautofailover'")).length === 1)
      for (const [name, value] of Object.entries(FAST_FAILOVER_SETTINGS)) await formation.query(options.monitorPort, 'pg_auto_failover', `alter system set ${name} = ${value}`)
      await formation.query(options.monitorPort, 'pg_auto_failover', 'select pg_reload_conf()')
      for (const [index, port] of options.nodePorts.entries()) {
        const name = `node${index + 1}`
        const pgdata = join(dir, name)
        const child = formation.spawn(name, [
          'create', 'postgres', '--pgdata', pgdata, '--pgport', String(port), '--hostname', '127.0.0.1', '--name', name, '--auth', 'trust', '--no-ssl',
          '--dbname', 'devplatform', '--monitor', formation.monitorUrl(), '--run',
        ])
        formation.nodes.push({ name, port, pgdata, process: child })
        const wanted = index === 0 ? ['wait_primary', 'primary', 'single'] : ['secondary']
        await formation.until(deadline, `${name} to be ${wanted.join(' or ')}`, async () => {
          const states = await formation.states()
          // pg_basebackup waits for a checkpoint, which PostgreSQL spreads over minutes: ask for one now.
          if (index > 0) await formation.query(options.nodePorts[0] ?? 0, 'devplatform', 'checkpoint').catch(() => undefined)
          return wanted.includes(states.get(name) ?? '')
        })
      }
      await formation.until(deadline, 'node1 to be primary with a synchronous standby', async () => (await formation.states()).get('node1') === 'primary')
      return formation
    } catch (error) {
      await formation.stop()
      throw error
    }
  }

  /** postgres://monitor… as the nodes were given it. */
  monitorUrl(): string {
    return `postgres://autoctl_node@127.0.0.1:${this.monitorPort}/pg_auto_failover?sslmode=disable`
  }

  /**
   * The URL an instance is given: the formation URI `pg_autoctl show uri --formation default`
   * prints (every node, target_session_attrs=read-write), with the user, and sslmode=disable for
   * these nodes without TLS (node-postgres reads "prefer" as verify-full).
   */
  async databaseUrl(user = 'postgres'): Promise<string> {
    const { stdout } = await this.autoctl(['show', 'uri', '--formation', 'default', '--pgdata', join(this.dir, 'monitor')])
    const uri = /postgres:\/\/\S+/.exec(stdout)?.[0]
    if (uri === undefined) throw new Error(`pg_autoctl show uri printed no formation URI: ${stdout}`)
    return uri.replace('postgres://', `postgres://${user}@`).replace('sslmode=prefer', 'sslmode=disable')
  }

  /** Each node's state as the monitor last heard it (`pg_autoctl show state`). */
  async states(): Promise<Map<string, string>> {
    const rows = await this.query(this.monitorPort, 'pg_auto_failover', 'select nodename, reportedstate::text as state from pgautofailover.node').catch(() => [])
    return new Map(rows.map((row) => [String(row.nodename), String(row.state)]))
  }

  /** The node that takes writes now, asking each node itself; undefined while none does. */
  async writable(): Promise<FormationNode | undefined> {
    for (const node of this.nodes) {
      const rows = await this.query(node.port, 'devplatform', 'show transaction_read_only', 1_000).catch(() => undefined)
      if (rows?.[0]?.transaction_read_only === 'off') return node
    }
    return undefined
  }

  /**
   * The node's machine dies: its postmaster and its pg_autoctl (the keeper, which would otherwise
   * restart PostgreSQL in place) are killed with SIGKILL at once.
   */
  kill9(node: FormationNode): void {
    const postmaster = Number(readFileSync(join(node.pgdata, 'postmaster.pid'), 'utf8').split('\n')[0])
    if (node.process.pid !== undefined) process.kill(-node.process.pid, 'SIGKILL')
    try {
      process.kill(postmaster, 'SIGKILL')
    } catch {
      // gone with its process group
    }
  }

  /** Starts a killed node again: it rejoins the formation (as a standby once the monitor says so). */
  restart(node: FormationNode): void {
    node.process = this.spawn(node.name, ['run', '--pgdata', node.pgdata])
  }

  /**
   * Resolves once the monitor hears one node as primary and the other as secondary (its
   * synchronous standby again, after a failover); rejects after timeoutMs.
   */
  async settled(timeoutMs = 60_000): Promise<void> {
    await this.until(Date.now() + timeoutMs, 'a primary and a secondary', async () => [...(await this.states()).values()].sort().join() === 'primary,secondary')
  }

  /** `pg_autoctl perform switchover`: the primary hands over to the standby and becomes its standby; resolves when done. */
  async switchover(): Promise<void> {
    await this.autoctl(['perform', 'switchover', '--formation', 'default', '--pgdata', join(this.dir, 'monitor')], 120_000)
  }

  async stop(): Promise<void> {
    for (const child of [...this.nodes.map((node) => node.process), this.monitor]) {
      if (child?.pid !== undefined && child.exitCode === null) {
        try {
          process.kill(-child.pid, 'SIGKILL')
        } catch {
          // already gone
        }
      }
    }
    // The postmasters of a killed group notice their parent is gone; make sure, by their pid files.
    for (const pgdata of [...this.nodes.map((node) => node.pgdata), join(this.dir, 'monitor')]) {
      try {
        process.kill(Number(readFileSync(join(pgdata, 'postmaster.pid'), 'utf8').split('\n')[0]), 'SIGKILL')
      } catch {
        // not running
      }
    }
    await sleep(200)
    rmSync(this.dir, { recursive: true, force: true })
  }

  /** Rows of one statement on a node (or the monitor), as the postgres user. */
  async query(port: number, database: string, text: string, timeoutMs = 3_000): Promise<Record<string, unknown>[]> {
    const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs })
    client.on('error', () => undefined)
    try {
      await client.connect()
      return (await client.query(text)).rows as Record<string, unknown>[]
    } finally {
      await client.end().catch(() => undefined)
    }
  }

  private async until(deadline: number, what: string, probe: () => Promise<boolean>): Promise<void> {
    for (;;) {
      if (await probe().catch(() => false)) return
      if (Date.now() > deadline) throw new Error(`pg_auto_failover formation: timed out waiting for ${what}; logs in ${this.dir}`)
      await sleep(250)
    }
  }

  /** The environment pg_autoctl runs in: PostgreSQL's binaries first, its configuration and state kept in the formation's directory. */
  private env(): NodeJS.ProcessEnv {
    return {
      PATH: `${POSTGRES_BIN}:/usr/bin:/bin`,
      XDG_CONFIG_HOME: join(this.dir, 'config'),
      XDG_DATA_HOME: join(this.dir, 'data'),
      XDG_RUNTIME_DIR: join(this.dir, 'run'),
    }
  }

  private command(args: readonly string[]): [string, string[]] {
    const variables = Object.entries(this.env()).map(([name, value]) => `${name}=${value ?? ''}`)
    if (process.getuid?.() === 0) return ['runuser', ['-u', 'postgres', '--', 'env', ...variables, 'pg_autoctl', ...args]]
    return ['env', [...variables, 'pg_autoctl', ...args]]
  }

  private spawn(name: string, args: readonly string[]): ChildProcess {
    mkdirSync(join(this.dir, 'logs'), { recursive: true })
    const [file, argv] = this.command(args)
    const log = join(this.dir, 'logs', `${name}.log`)
    // Its own process group (detached), its output to a file through the shell's redirection.
    const child = spawn('sh', ['-c', `exec "$0" "$@" >>'${log}' 2>&1`, file, ...argv], { detached: true, stdio: 'ignore', cwd: tmpdir() })
    child.unref()
    return child
  }

  private async autoctl(args: readonly string[], timeoutMs = 30_000): Promise<{ stdout: string }> {
    const [file, argv] = this.command(args)
    return await run(file, argv, { timeout: timeoutMs, cwd: tmpdir() })
  }
}

/** The postgres user's uid and gid. */
function postgresIds(): [number, number] {
  const fields = readFileSync('/etc/passwd', 'utf8').split('\n').find((entry) => entry.startsWith('postgres:'))?.split(':') ?? []
  const [uid, gid] = [Number(fields[2]), Number(fields[3])]
  if (!Number.isInteger(uid) || !Number.isInteger(gid) || fields.length < 4) throw new Error('no postgres user to run pg_autoctl as')
  return [uid, gid]
}
