import http from 'node:http'
import https from 'node:https'
import { isIP, type LookupFunction } from 'node:net'
import { addressRefusal, type GuardOptions, pinnedLookup, type ResolveHost } from './address-guard.js'

/** Kept with each attempt: enough to debug a receiver, bounded so a hostile one can't fill the disk. */
export const RESPONSE_BODY_LIMIT = 20 * 1024

export type SendResult =
  | { kind: 'response'; status: number; retryAfter: string | undefined; body: string }
  | { kind: 'error'; message: string }

export interface SendOptions {
  url: string
  headers: Record<string, string>
  body: string
  timeoutMs: number
  /** aborts the attempt (webhook deleted, shutdown); the result is then an error */
  signal: AbortSignal
  /** called once: when the whole request has been handed to the OS, or it ended without being written */
  onWritten?: () => void
  /**
   * For a new connection to a host name: `looking` is called when the lookup starts, `admit`
   * once the host has resolved, and the connection is made only when `admit` settles true (false
   * abandons the attempt). Reused connections and IP literals are not looked up.
   */
  lookup?: { looking: () => void; admit: () => Promise<boolean> }
}

/**
 * Sends webhook POSTs over keep-alive connections. Redirects are never followed (node's client
 * doesn't); every host is resolved through `lookup`, which refuses forbidden addresses and pins
 * the connection to the address it checked.
 */
export class WebhookSender {
  private readonly httpAgent: http.Agent
  private readonly httpsAgent: https.Agent
  private readonly lookup: ReturnType<typeof pinnedLookup>

  /** Its own agents: a kept-alive socket is only ever one this sender's guard checked. */
  constructor(private readonly guard: GuardOptions & { resolveHost: ResolveHost }) {
    this.lookup = pinnedLookup(guard.resolveHost, guard)
    this.httpAgent = new http.Agent({ keepAlive: true, scheduling: 'lifo' })
    this.httpsAgent = new https.Agent({ keepAlive: true, scheduling: 'lifo' })
  }

  send(options: SendOptions): Promise<SendResult> {
    return new Promise((resolve) => {
      let settled = false
      let written = false
      let timer: NodeJS.Timeout | undefined
      const markWritten = () => {
        if (written) return
        written = true
        options.onWritten?.()
      }
      const finish = (result: SendResult) => {
        markWritten()
        if (settled) return
        settled = true
        clearTimeout(timer)
        resolve(options.signal.aborted ? { kind: 'error', message: 'aborted' } : result)
      }
      let url: URL
      try {
        url = new URL(options.url)
      } catch {
        finish({ kind: 'error', message: 'invalid url' })
        return
      }
      // Node connects to an IP literal without calling lookup, so literals are checked here.
      const literal = url.hostname.replace(/^\[|\]$/g, '')
      if (isIP(literal) !== 0) {
        const refusal = addressRefusal(literal, this.guard)
        if (refusal !== undefined) {
          finish({ kind: 'error', message: `refused: ${refusal}` })
          return
        }
      }
      const secure = url.protocol === 'https:'
      const request = (secure ? https : http).request(url, {
        method: 'POST',
        agent: secure ? this.httpsAgent : this.httpAgent,
        lookup: options.lookup === undefined ? this.lookup : this.admittingLookup(options.lookup),
        headers: { ...options.headers, 'content-length': String(Buffer.byteLength(options.body)), 'user-agent': 'devplatform-webhooks/0.1' },
        signal: options.signal,
      })
      timer = setTimeout(() => {
        request.destroy()
        finish({ kind: 'error', message: `timed out after ${options.timeoutMs} ms` })
      }, options.timeoutMs)
      // 'finish': the request's bytes are in the socket (after the connection, if a new one, was made).
      request.on('finish', markWritten)
      request.on('error', (error: NodeJS.ErrnoException) => {
        const message = error.message || error.code || 'connection error'
        finish({ kind: 'error', message: error.code === 'EADDRREFUSED_SSRF' ? `refused: ${message}` : message })
      })
      request.on('response', (response) => {
        const chunks: Buffer[] = []
        let size = 0
        const done = () => {
          const retryAfter = response.headers['retry-after']
          finish({
            kind: 'response',
            status: response.statusCode ?? 0,
            retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined,
            body: Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT).toString('utf8'),
          })
        }
        response.on('data', (chunk: Buffer) => {
          chunks.push(chunk)
          size += chunk.length
          // Enough kept: stop reading (the connection is dropped rather than drained).
          if (size >= RESPONSE_BODY_LIMIT) {
            done()
            response.destroy()
          }
        })
        response.on('end', done)
        response.on('error', () => done())
        response.on('aborted', () => done())
      })
      request.end(options.body)
    })
  }

  /** The guarded lookup, reporting its start and holding the connection until it is admitted. */
  private admittingLookup(hooks: NonNullable<SendOptions['lookup']>): LookupFunction {
    return (hostname, lookupOptions, callback) => {
      hooks.looking()
      this.lookup(hostname, lookupOptions, (error, address, family) => {
        if (error !== null) {
          callback(error, address, family)
          return
        }
        void hooks
          .admit()
          .catch(() => false)
          .then((admitted) => {
          if (admitted) callback(null, address, family)
          else callback(Object.assign(new Error('abandoned before connecting'), { code: 'EABANDONED' }), address, family)
        })
      })
    }
  }

  close(): void {
    this.httpAgent.destroy()
    this.httpsAgent.destroy()
  }
}
