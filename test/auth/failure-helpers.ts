import { randomInt } from 'node:crypto'
import { request as httpRequest } from 'node:http'
import { expect } from 'vitest'
import type { TestKey, TestServer } from '../helper.js'

/** A fresh loopback source address (all of 127/8 reaches the server), so runs never share counters in Redis. */
export function address(): string {
  return `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(2, 255)}`
}

export interface Answer {
  status: number
  retryAfter: string | undefined
  body: { statusCode?: number; error?: string; message?: string; details?: string }
}

/** GET /api/v0/webhooks over a real socket from `from`, with the given credentials. */
export function call(server: TestServer, from: string, clientKey: string, clientSecret: string): Promise<Answer> {
  const url = new URL('/api/v0/webhooks', server.baseUrl)
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, path: url.pathname, localAddress: from, agent: false, headers: { 'x-client-key': clientKey, 'x-client-secret': clientSecret } },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (text += chunk))
        res.on('end', () => {
          const retryAfter = res.headers['retry-after']
          resolve({ status: res.statusCode ?? 0, retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined, body: JSON.parse(text) as Answer['body'] })
        })
      },
    )
    req.on('error', reject)
    req.end()
  })
}

export const wrong = (key: TestKey) => `${key.clientSecret}x`

export interface LogLine {
  event?: string
  scope?: string
  clientAddress?: string
  keyId?: string
  msg?: string
}

export function throttleLines(server: TestServer): LogLine[] {
  return server
    .logs()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as LogLine)
    .filter((line) => line.event === 'auth_failures_throttled')
}

export function expectThrottled(answer: Answer): void {
  expect(answer.status).toBe(429)
  expect(answer.body).toMatchObject({ statusCode: 429, error: 'Too Many Requests', message: 'Too many failed authentication attempts' })
  expect(answer.body.details).toMatch(/^Authentication is paused after too many failed attempts; retry in \d+ seconds$/)
  const seconds = Number(answer.retryAfter)
  expect(seconds).toBeGreaterThanOrEqual(1)
  expect(seconds).toBeLessThanOrEqual(60)
  expect(answer.body.details).toContain(`retry in ${seconds} seconds`)
}
