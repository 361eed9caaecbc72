import http from 'node:http'
import https from 'node:https'
import { isIP } from 'node:net'
import { addressRefusal, type GuardOptions, pinnedLookup, type ResolvedAddress, type ResolveHost, resolveAllowed } from './address-guard.js'

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
  abort: AttemptAbort
  /** called once: when the whole request has been handed to the OS, or it ended without being written */
  onWritten?: () => void
  /**
   * For a url with a host name: `looking` is called when its lookup starts, `admit` once it has
   * resolved, and the request is made only when `admit` settles true (false abandons the
   * attempt). IP literals are not looked up.
   */
  lookup?: { looking: () => void; admit: () => Promise<boolean> }
}

/**
 * An attempt's abort switch: what an AbortSignal would do for `send`, without EventTarget. Handing
 * node's client an AbortSignal (`signal` option) cost 45 µs of CPU per request here (it listens on
 * the signal and watches the request's end to stop listening): 220.2 against 173.8 µs per
 * keep-alive POST, client and receiver together. One listener at a time: the one step of the
 * attempt that is waiting (the lookup, then the request).
 */
export class AttemptAbort {
  private isAborted = false
  private listener: (() => void) | undefined

  get aborted(): boolean {
    return this.isAborted
  }

  abort(): void {
    if (this.isAborted) return
    this.isAborted = true
    const listener = this.listener
    this.listener = undefined
    listener?.()
  }

  /** `listener` is called once when the switch is thrown (at once if it already was); undefined stops listening. */
  onAbort(listener: (() => void) | undefined): void {
    if (this.isAborted) {
      this.listener = undefined
      listener?.()
      return
    }
    this.listener = listener
  }
}

/**
 * Sends webhook POSTs over keep-alive connections. Redirects are never followed (node's client
 * doesn't); every host is resolved through `lookup`, which refuses forbidden addresses and pins
 * the connection to the address it checked.
 */
export class WebhookSender {
  private readonly httpAgent: http.Agent
  private readonly httpsAgent: https.Agent

  /** Its own agents: a kept-alive socket is only ever one this sender's guard checked. */
  constructor(private readonly guard: GuardOptions & { resolveHost: ResolveHost }) {
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
        options.abort.onAbort(undefined)
        resolve(options.abort.aborted ? { kind: 'error', message: 'aborted' } : result)
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
      const literalFamily = isIP(literal)
      if (literalFamily !== 0) {
        const refusal = addressRefusal(literal, this.guard)
        if (refusal !== undefined) {
          finish({ kind: 'error', message: `refused: ${refusal}` })
          return
        }
      }
      if (options.abort.aborted) {
        finish({ kind: 'error', message: 'aborted' })
        return
      }
      let request: http.ClientRequest | undefined
      timer = setTimeout(() => {
        request?.destroy()
        // No request yet: the host name never resolved, which the receiver's owner needs to know.
        const resolving = request === undefined && literalFamily === 0 ? ` resolving ${url.hostname}` : ''
        finish({ kind: 'error', message: `timed out after ${options.timeoutMs} ms${resolving}` })
      }, options.timeoutMs)
      const start = (vetted: ResolvedAddress[]) => {
        const secure = url.protocol === 'https:'
        request = (secure ? https : http).request(url, {
          method: 'POST',
          agent: secure ? this.httpsAgent : this.httpAgent,
          // Only ever the vetted addresses: the socket connects to exactly what was checked.
          lookup: pinnedLookup(async () => vetted, this.guard),
          // Object.assign, not a spread with properties after it: V8's slow path on Node 20 (2.5 µs here).
          headers: Object.assign({}, options.headers, { 'content-length': String(Buffer.byteLength(options.body)), 'user-agent': 'devplatform-webhooks/0.1' }),
        })
        // Aborted: the request and its socket are destroyed; 'error' then settles the attempt as aborted.
        options.abort.onAbort(() => request?.destroy(new Error('aborted')))
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
      }
      if (literalFamily !== 0) {
        start([{ address: literal, family: literalFamily === 6 ? 6 : 4 }])
        return
      }
      // A host name is resolved (and vetted) before the request is built, so an attempt waiting
      // on DNS holds a lookup and a timer, not a request, a socket and its buffers: a backlog to
      // hosts that are slow to resolve keeps little alive (the slow-DNS memory run).
      const onAbort = () => finish({ kind: 'error', message: 'aborted' })
      options.abort.onAbort(onAbort)
      options.lookup?.looking()
      resolveAllowed(url.hostname, this.guard.resolveHost, this.guard)
        .then(async (vetted) => ((await (options.lookup?.admit() ?? true)) ? vetted : undefined))
        .then(
          (vetted) => {
            options.abort.onAbort(undefined)
            if (settled) return
            if (vetted === undefined) finish({ kind: 'error', message: 'abandoned before connecting' })
            else start(vetted)
          },
          (error: NodeJS.ErrnoException) => {
            options.abort.onAbort(undefined)
            const message = error.message || error.code || 'could not resolve'
            finish({ kind: 'error', message: error.code === 'EADDRREFUSED_SSRF' ? `refused: ${message}` : message })
          },
        )
    })
  }

  close(): void {
    this.httpAgent.destroy()
    this.httpsAgent.destroy()
  }
}
