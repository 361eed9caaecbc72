import { spawn } from 'node:child_process'
import SQLite from 'better-sqlite3'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEST_BACKEND } from '../backend.js'
import { startTestServer, type TestKey, type TestServer } from '../helper.js'
import { CLI, cleanUp, ROOT, serviceEnv, track } from '../processes.js'

/**
 * The auth hook does not read a key with a statement of its own on every request (src/auth/
 * known-keys.ts): these tests hold it to "a key deactivated from any process is refused on the
 * very next request", by the CLI in another process and by SQL on another connection, also while
 * the key's requests are under way, and check that a key's other changes and other keys' changes
 * are seen as well.
 */

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => {
  cleanUp()
  await server.close()
})

const list = (key: TestKey) => server.request('GET', '/api/v0/webhooks', { key })

/** `devplatform keys deactivate --key …` in a process of its own, on the server's database. */
function deactivateByCli(key: TestKey): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = track(
      spawn(process.execPath, [CLI, 'keys', 'deactivate', '--key', key.clientKey, '--json'], {
        cwd: ROOT,
        env: serviceEnv({ DATABASE_URL: server.database.url }),
        stdio: ['ignore', 'ignore', 'pipe'],
      }),
    )
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`the CLI exited with ${code}: ${stderr}`))))
  })
}

/** A statement on a connection of its own (not the server's), committed when this returns. */
async function executeElsewhere(statement: string, ...values: (string | number)[]): Promise<void> {
  const url = server.database.url
  if (TEST_BACKEND === 'sqlite') {
    const db = new SQLite(url.slice('sqlite:'.length), { fileMustExist: true, timeout: 5000 })
    try {
      db.prepare(statement).run(...values)
    } finally {
      db.close()
    }
    return
  }
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    let n = 0
    await client.query(
      statement.replace(/\?/g, () => `$${++n}`),
      values,
    )
  } finally {
    await client.end()
  }
}

describe('a key changed from elsewhere is seen on the very next request', () => {
  it('deactivated by the CLI in another process: 403 on the next request', async () => {
    const key = await server.createKey()
    expect((await list(key)).status).toBe(200)
    expect((await list(key)).status).toBe(200)
    await deactivateByCli(key)
    const res = await list(key)
    expect(res.status).toBe(403)
    expect(res.body).toEqual({ statusCode: 403, error: 'Forbidden', message: 'API key is inactive', details: 'This API key has been deactivated' })
  })

  it('deactivated by SQL on another connection: 403 on the next request', async () => {
    const key = await server.createKey()
    expect((await list(key)).status).toBe(200)
    await executeElsewhere('update api_keys set active = 0 where id = ?', key.id)
    expect((await list(key)).status).toBe(403)
  })

  it('while its requests are under way: every request sent after the deactivation returned is refused', async () => {
    const key = await server.createKey()
    expect((await list(key)).status).toBe(200)
    let deactivatedAt: number | undefined
    const after: number[] = []
    let before = 0
    let stop = false
    // Ten callers, each sending its next request as soon as its last one answered.
    const callers = Array.from({ length: 10 }, async () => {
      while (!stop) {
        const sentAfterDeactivation = deactivatedAt !== undefined
        const { status } = await list(key)
        if (sentAfterDeactivation) after.push(status)
        else if (status === 200) before++
      }
    })
    await new Promise((resolve) => setTimeout(resolve, 200))
    await deactivateByCli(key)
    deactivatedAt = Date.now()
    await new Promise((resolve) => setTimeout(resolve, 300))
    stop = true
    await Promise.all(callers)
    expect(before).toBeGreaterThan(0)
    expect(after.length).toBeGreaterThan(10)
    expect(new Set(after)).toEqual(new Set([403]))
  })

  it("a key's other changes count too (its scopes), and other keys' changes leave it working", async () => {
    const key = await server.createKey()
    const other = await server.createKey()
    expect((await list(key)).status).toBe(200)
    await executeElsewhere('update api_keys set active = 0 where id = ?', other.id)
    expect((await list(key)).status).toBe(200)
    expect((await list(other)).status).toBe(403)
    await executeElsewhere('update api_keys set scopes = ? where id = ?', JSON.stringify(['customer:read']), key.id)
    const res = await list(key)
    expect(res.status).toBe(403)
    expect((res.body as { message: string }).message).toBe('Missing required scope')
  })

  it('a key created elsewhere is known at once, and its limit is the one stored', async () => {
    const key = await server.createKey({ rateLimit: 2 })
    expect((await list(key)).status).toBe(200)
    expect((await list(key)).status).toBe(200)
    expect((await list(key)).status).toBe(429)
    await executeElsewhere('update api_keys set rate_limit_per_hour = 3 where id = ?', key.id)
    const res = await list(key)
    expect(res.status).toBe(200)
    expect(res.headers.get('ratelimit-policy')).toBe('"hour";q=3;w=3600')
  })
})

describe('many requests of one key at once', () => {
  it('are each answered as their key stands, whatever the others', async () => {
    const keys = await Promise.all(Array.from({ length: 5 }, () => server.createKey()))
    const inactive = await server.createKey()
    await executeElsewhere('update api_keys set active = 0 where id = ?', inactive.id)
    const replies = await Promise.all(Array.from({ length: 60 }, (_, i) => list(i % 6 === 5 ? inactive : (keys[i % 6] as TestKey))))
    expect(replies.map((reply) => reply.status)).toEqual(Array.from({ length: 60 }, (_, i) => (i % 6 === 5 ? 403 : 200)))
  })
})
