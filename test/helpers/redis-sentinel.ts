import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'

/**
 * A Redis master, one replica and three sentinels on this machine, as docs/several-instances.md's
 * "Redis failover (Sentinel)" walk-through sets them up: Debian's redis-server, as a server and
 * as a sentinel (`redis-server FILE --sentinel`, what the redis-sentinel package's command runs), as child processes, on their own ports, in a temporary directory, with no persistence.
 */

export const MASTER_NAME = 'devplatform'

/**
 * The sentinels' timings, shortened from their defaults (a master is down after 30 s without an
 * answer, a failover is given 3 min) so that a failover takes seconds; an operator chooses these
 * against the network's hiccups: see docs/several-instances.md.
 */
export const FAST_SENTINEL_SETTINGS = { downAfterMs: 1_000, failoverTimeoutMs: 5_000 }

export interface RedisNode {
  name: string
  port: number
  process: ChildProcess
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

export class RedisSentinelGroup {
  readonly nodes: RedisNode[] = []
  readonly sentinels: RedisNode[] = []

  private constructor(readonly dir: string) {}

  /**
   * Starts the master, its replica (once the master answers) and three sentinels watching the
   * master with a quorum of 2; resolves once the replica is in sync and every sentinel knows the
   * replica and the two other sentinels (so that a failover can be agreed on).
   */
  static async start(options: { redisPorts: readonly [number, number]; sentinelPorts: readonly [number, number, number]; timeoutMs?: number }): Promise<RedisSentinelGroup> {
    const group = new RedisSentinelGroup(mkdtempSync(join(tmpdir(), 'redis-sentinel-')))
    const deadline = Date.now() + (options.timeoutMs ?? 30_000)
    try {
      const [masterPort, replicaPort] = options.redisPorts
      group.nodes.push(group.server('master', masterPort, []))
      await group.until(deadline, 'the master to answer', async () => (await group.command(masterPort, 'ping')) === 'PONG')
      group.nodes.push(group.server('replica', replicaPort, ['--replicaof', '127.0.0.1', String(masterPort)]))
      await group.until(deadline, 'the replica to be in sync', async () => /master_link_status:up/.test(String(await group.command(replicaPort, 'info', 'replication'))))
      for (const [index, port] of options.sentinelPorts.entries()) {
        const file = join(group.dir, `sentinel-${index + 1}.conf`)
        // The sentinel rewrites its file (what it learnt, the new master after a failover).
        writeFileSync(file, [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${group.dir}`,
          `logfile ${join(group.dir, `sentinel-${index + 1}.log`)}`,
          `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${masterPort} 2`,
          `sentinel down-after-milliseconds ${MASTER_NAME} ${FAST_SENTINEL_SETTINGS.downAfterMs}`,
          `sentinel failover-timeout ${MASTER_NAME} ${FAST_SENTINEL_SETTINGS.failoverTimeoutMs}`,
          `sentinel parallel-syncs ${MASTER_NAME} 1`,
          '',
        ].join('\n'))
        group.sentinels.push({ name: `sentinel-${index + 1}`, port, process: group.spawn('redis-server', [file, '--sentinel']) })
      }
      for (const sentinel of group.sentinels) {
        await group.until(deadline, `${sentinel.name} to know the replica and the other sentinels`, async () => {
          const fields = pairs(await group.command(sentinel.port, 'sentinel', 'master', MASTER_NAME))
          return fields.get('num-slaves') === '1' && fields.get('num-other-sentinels') === '2'
        })
      }
      return group
    } catch (error) {
      await group.stop()
      throw new Error(`${error instanceof Error ? error.message : String(error)}; logs in ${group.dir}`)
    }
  }

  /** What an instance is given: redis+sentinel://…/devplatform, every sentinel. */
  url(): string {
    return `redis+sentinel://${this.sentinels.map((sentinel) => `127.0.0.1:${sentinel.port}`).join(',')}/${MASTER_NAME}`
  }

  /** The master's port as the first sentinel that answers names it. */
  async masterPort(): Promise<number | undefined> {
    for (const sentinel of this.sentinels) {
      const reply = await this.command(sentinel.port, 'sentinel', 'get-master-addr-by-name', MASTER_NAME).catch(() => undefined)
      if (Array.isArray(reply)) return Number(reply[1])
    }
    return undefined
  }

  /** A node's role as it says itself ('master', 'slave'), undefined when it does not answer. */
  async role(node: RedisNode): Promise<string | undefined> {
    const reply = await this.command(node.port, 'role').catch(() => undefined)
    return Array.isArray(reply) ? String(reply[0]) : undefined
  }

  /** The node's machine dies: SIGKILL, nothing flushed, no goodbye to the replica. */
  kill9(node: RedisNode): void {
    node.process.kill('SIGKILL')
  }

  /** Starts a killed node again, empty, as a master: the sentinels make it the new master's replica. */
  restart(node: RedisNode): void {
    node.process = this.server(node.name, node.port, []).process
  }

  /**
   * `SENTINEL FAILOVER`: a planned handover to the replica, the master still running (it becomes
   * the replica); retried while the sentinels have no replica good enough yet (NOGOODSLAVE).
   */
  async switchover(timeoutMs = 20_000): Promise<void> {
    const sentinel = this.sentinels[0]
    if (sentinel === undefined) throw new Error('no sentinel')
    await this.until(Date.now() + timeoutMs, 'a sentinel to start a failover', async () => (await this.command(sentinel.port, 'sentinel', 'failover', MASTER_NAME)) === 'OK')
  }

  /** One command on a node or sentinel, on a connection of its own that never retries. */
  async command(port: number, name: string, ...args: string[]): Promise<unknown> {
    const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 1_000, commandTimeout: 1_000, enableReadyCheck: false })
    client.on('error', () => undefined)
    try {
      await client.connect()
      return await client.call(name, ...args)
    } finally {
      client.disconnect()
    }
  }

  async stop(): Promise<void> {
    for (const child of [...this.sentinels, ...this.nodes].map((node) => node.process)) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    }
    await sleep(100)
    rmSync(this.dir, { recursive: true, force: true })
  }

  private server(name: string, port: number, extra: readonly string[]): RedisNode {
    // No persistence: no RDB snapshots, no append-only file (the replica syncs over the socket).
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir, '--logfile', join(this.dir, `${name}.log`), ...extra]
    return { name, port, process: this.spawn('redis-server', args) }
  }

  private spawn(file: string, args: readonly string[]): ChildProcess {
    const child = spawn(file, args, { stdio: 'ignore', cwd: this.dir })
    child.on('error', () => undefined)
    return child
  }

  private async until(deadline: number, what: string, probe: () => Promise<boolean>): Promise<void> {
    for (;;) {
      if (await probe().catch(() => false)) return
      if (Date.now() > deadline) throw new Error(`Redis Sentinel group: timed out waiting for ${what}`)
      await sleep(100)
    }
  }
}

/** A flat [field, value, field, value…] reply as a map. */
function pairs(reply: unknown): Map<string, string> {
  const map = new Map<string, string>()
  if (!Array.isArray(reply)) return map
  for (let i = 0; i + 1 < reply.length; i += 2) map.set(String(reply[i]), String(reply[i + 1]))
  return map
}
