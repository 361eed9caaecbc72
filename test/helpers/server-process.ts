import { launch, type Running, SERVER } from '../processes.js'

const LISTENING = /Server listening at http:\/\/127\.0\.0\.1:(\d+)/
const BANNER_END = /API reference: \S+\n/
const KEY_LINE = /x-client-key:\s+(\S+)/
const SECRET_LINE = /x-client-secret:\s+(\S+)/

export interface DevelopmentKey {
  'x-client-key': string
  'x-client-secret': string
}

export interface ServerProcess extends Running {
  pid: number
  port: number
  /** http://127.0.0.1:PORT */
  baseUrl: string
  /** the development key this start printed (only a first start on an empty database outside production prints one) */
  devKey: DevelopmentKey | undefined
}

/**
 * The one way tests start the built server as a child process: `node dist/server.js` on a free
 * port with `vars` (LOG_LEVEL must let info lines through: the "Server listening" line is one),
 * resolved once it listens and, with `expectDevKey`, once it has printed the development key.
 */
export async function startServerProcess(vars: Record<string, string>, options: { expectDevKey?: boolean; timeoutMs?: number } = {}): Promise<ServerProcess> {
  const running = launch(SERVER, [], { PORT: '0', ...vars })
  const match = await running.waitFor(LISTENING, options.timeoutMs ?? 20_000)
  const port = Number(match[1])
  let devKey: DevelopmentKey | undefined
  if (options.expectDevKey === true) {
    // The banner is one write after listening; its last line says it is complete.
    await running.waitFor(BANNER_END, 10_000)
    const out = running.stdout()
    const clientKey = out.match(KEY_LINE)?.[1]
    const clientSecret = out.match(SECRET_LINE)?.[1]
    if (clientKey === undefined || clientSecret === undefined) throw new Error(`no development key printed; stdout=${out}`)
    devKey = { 'x-client-key': clientKey, 'x-client-secret': clientSecret }
  }
  return { ...running, pid: running.child.pid ?? -1, port, baseUrl: `http://127.0.0.1:${port}`, devKey }
}
