// vitest: sqlite project only — npm start runs the server on SQLite whatever the run.
import { spawn } from 'node:child_process'
import { connect } from 'node:net'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { cleanUp, ROOT, serviceEnv, tempDir, track, waitUntil } from '../processes.js'

/**
 * A process manager pointed at the README's start command signals npm, not the server: the
 * signal must reach the server, or it goes on holding the port with nobody to stop it.
 */

afterAll(() => cleanUp())

/** Whether the process exists (a zombie counts, as its parent has not reaped it yet). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

it('SIGTERM to `npm start` stops the server: npm exits, the port is freed and no server process is left', async () => {
  const dir = tempDir('npm-start-')
  const vars = { PORT: '0', DATABASE_URL: `sqlite:${join(dir, 'devplatform.db')}`, PRODUCT_IMAGES_DIR: join(dir, 'product-images'), LOG_LEVEL: 'info' }
  const npm = track(spawn('npm', ['start'], { cwd: ROOT, env: { ...serviceEnv(vars), npm_config_update_notifier: 'false' } }))
  let out = ''
  npm.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
  // 'exit', not 'close': a server left behind would hold npm's stdout open.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => npm.on('exit', (code, signal) => resolve({ code, signal })))
  let serverPid: number | undefined
  try {
    // The server's pino line says where it listens and which process it is.
    const listening = await waitUntil('the server listening', () => {
      const line = out.split('\n').find((text) => text.includes('Server listening at'))
      return line === undefined ? undefined : (JSON.parse(line) as { pid: number; msg: string })
    }, 20_000)
    serverPid = listening.pid
    const port = Number(listening.msg.match(/127\.0\.0\.1:(\d+)/)?.[1])
    expect(serverPid).not.toBe(npm.pid)
    expect(await accepts(port)).toBe(true)

    npm.kill('SIGTERM')
    const exit = await Promise.race([exited, new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 15_000))])
    const pid = serverPid
    await waitUntil('no server process left', () => (alive(pid) ? undefined : true), 2_000).catch(() => undefined)
    // npm exits as its script did: the server's graceful stop exits 0.
    expect({ npm: exit, serverAlive: alive(pid), portAccepts: await accepts(port) }).toEqual({ npm: { code: 0, signal: null }, serverAlive: false, portAccepts: false })
    expect(out).toContain('shutting down: finishing in-flight requests')
  } finally {
    if (serverPid !== undefined && alive(serverPid)) process.kill(serverPid, 'SIGKILL')
  }
})
