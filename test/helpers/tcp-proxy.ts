import { createServer, type Server, type Socket, connect } from 'node:net'

/**
 * What the proxy does to its connections: `pass` forwards both ways; `stall` keeps every
 * connection open and accepts new ones but forwards nothing (a peer that stopped answering);
 * `refuse` closes every connection, open or new (a peer that is gone).
 */
export type ProxyMode = 'pass' | 'stall' | 'refuse'

interface Pair {
  client: Socket
  upstream: Socket
  flush(): void
}

/** A TCP proxy on 127.0.0.1 in front of `target`, whose behaviour a test switches while clients use it. */
export class TcpProxy {
  private mode: ProxyMode = 'pass'
  private readonly pairs = new Set<Pair>()
  /**
   * Times a client sent something after its peer had answered (or first): its round trips, with
   * what one write or several writes of one moment carry counted once.
   */
  flights = 0

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetHost: string, targetPort: number): Promise<TcpProxy> {
    let proxy: TcpProxy | undefined
    const server = createServer((client) => proxy?.accept(client, targetHost, targetPort))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const address = server.address()
    if (address === null || typeof address === 'string') throw new Error('proxy: no port')
    proxy = new TcpProxy(server, address.port)
    return proxy
  }

  /** `url` with its host and port replaced by the proxy's. */
  urlFor(url: string): string {
    const parsed = new URL(url)
    parsed.hostname = '127.0.0.1'
    parsed.port = String(this.port)
    return parsed.toString()
  }

  setMode(mode: ProxyMode): void {
    this.mode = mode
    if (mode === 'refuse') for (const pair of [...this.pairs]) this.cut(pair)
    if (mode === 'pass') for (const pair of this.pairs) pair.flush()
  }

  private accept(client: Socket, host: string, port: number): void {
    client.on('error', () => undefined)
    if (this.mode === 'refuse') {
      client.destroy()
      return
    }
    const upstream = connect(port, host)
    upstream.on('error', () => undefined)
    // What arrived while stalled, per direction, forwarded in order once the proxy passes again.
    const held: { to: Socket; chunk: Buffer }[] = []
    const forward = (to: Socket) => (chunk: Buffer) => {
      if (this.mode === 'pass' && held.length === 0) to.write(chunk)
      else held.push({ to, chunk })
    }
    const pair: Pair = {
      client,
      upstream,
      flush: () => {
        for (const { to, chunk } of held.splice(0)) to.write(chunk)
      },
    }
    this.pairs.add(pair)
    let clientSpokeLast = false
    const toUpstream = forward(upstream)
    const toClient = forward(client)
    client.on('data', (chunk: Buffer) => {
      if (!clientSpokeLast) this.flights++
      clientSpokeLast = true
      toUpstream(chunk)
    })
    upstream.on('data', (chunk: Buffer) => {
      clientSpokeLast = false
      toClient(chunk)
    })
    const end = () => this.cut(pair)
    client.on('close', end)
    upstream.on('close', end)
  }

  private cut(pair: Pair): void {
    this.pairs.delete(pair)
    pair.client.destroy()
    pair.upstream.destroy()
  }

  async close(): Promise<void> {
    for (const pair of [...this.pairs]) this.cut(pair)
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}
