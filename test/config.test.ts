// vitest: sqlite project only — configuration parsing and a server on SQLite whatever the run.
import { existsSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { ConfigError, defaultPublicUrl, loadConfig, parseRedisSentinelUrl, postgresHostUrls, publicUrlOf } from '../src/config.js'
import { cleanUp, exitWithin, freshDb, launch, SERVER } from './processes.js'

describe('loadConfig', () => {
  it('defaults: 127.0.0.1:3000, ./data/devplatform.db, info, development', () => {
    const config = loadConfig({})
    expect(config).toEqual({
      port: 3000,
      host: '127.0.0.1',
      database: { kind: 'sqlite', filename: `${process.cwd()}/data/devplatform.db` },
      logLevel: 'info',
      nodeEnv: 'development',
      webhooks: { dispatcher: true, timeoutMs: 15_000, concurrency: 256, perAppConcurrency: 64, perWebhookConcurrency: 16, pollIntervalMs: 250 },
      requestTimeoutMs: 30_000,
      redisTimeoutMs: 100,
      authFailures: { perAddress: 20, perKey: 20, windowSeconds: 60 },
      drains: { scheduler: true, fastDelayMs: 1_000, achDelayMs: 3_000, pollIntervalMs: 250, concurrency: 4 },
      exchangeRateMaxAgeMs: 3_600_000,
      productImagesDir: `${process.cwd()}/data/product-images`,
      publicUrl: undefined,
    })
  })

  it('reads the drain scheduler and the rates age at their bounds; a value past one is refused naming it', () => {
    const low = { DRAIN_SCHEDULER: 'off', DRAIN_DELAY_FAST_MS: '0', DRAIN_DELAY_ACH_MS: '0', DRAIN_POLL_MS: '10', DRAIN_CONCURRENCY: '1', EXCHANGE_RATE_MAX_AGE_SECONDS: '1' }
    expect(loadConfig(low).drains).toEqual({ scheduler: false, fastDelayMs: 0, achDelayMs: 0, pollIntervalMs: 10, concurrency: 1 })
    expect(loadConfig(low).exchangeRateMaxAgeMs).toBe(1_000)
    const high = { DRAIN_DELAY_FAST_MS: '86400000', DRAIN_DELAY_ACH_MS: '86400000', DRAIN_POLL_MS: '60000', DRAIN_CONCURRENCY: '256', EXCHANGE_RATE_MAX_AGE_SECONDS: '31536000' }
    expect(loadConfig(high).drains).toEqual({ scheduler: true, fastDelayMs: 86_400_000, achDelayMs: 86_400_000, pollIntervalMs: 60_000, concurrency: 256 })
    expect(loadConfig(high).exchangeRateMaxAgeMs).toBe(31_536_000_000)
    const bad: Record<string, string>[] = [
      { DRAIN_DELAY_FAST_MS: '86400001' },
      { DRAIN_DELAY_ACH_MS: '-1' },
      { DRAIN_POLL_MS: '9' },
      { DRAIN_POLL_MS: '60001' },
      { DRAIN_CONCURRENCY: '0' },
      { DRAIN_CONCURRENCY: '257' },
      { EXCHANGE_RATE_MAX_AGE_SECONDS: '0' },
      { EXCHANGE_RATE_MAX_AGE_SECONDS: '31536001' },
    ]
    for (const env of bad) {
      const [name] = Object.keys(env)
      expect(() => loadConfig(env)).toThrow(`${name ?? ''} must be an integer from`)
    }
    expect(() => loadConfig({ DRAIN_SCHEDULER: 'yes' })).toThrow('DRAIN_SCHEDULER must be one of on, off (got "yes")')
  })

  it('reads every variable', () => {
    expect(
      loadConfig({
        PORT: '0',
        HOST: '0.0.0.0',
        DATABASE_URL: 'sqlite::memory:',
        LOG_LEVEL: 'warn',
        NODE_ENV: 'production',
        PUBLIC_URL: 'https://pay.example.com',
        WEBHOOK_DISPATCHER: 'off',
        WEBHOOK_TIMEOUT_MS: '100',
        WEBHOOK_CONCURRENCY: '10000',
        WEBHOOK_CONCURRENCY_PER_APP: '10000',
        WEBHOOK_CONCURRENCY_PER_WEBHOOK: '1',
        WEBHOOK_POLL_MS: '60000',
        REQUEST_TIMEOUT_MS: '600000',
      }),
    ).toEqual({
      port: 0,
      host: '0.0.0.0',
      database: { kind: 'sqlite', filename: ':memory:' },
      logLevel: 'warn',
      nodeEnv: 'production',
      webhooks: { dispatcher: false, timeoutMs: 100, concurrency: 10000, perAppConcurrency: 10000, perWebhookConcurrency: 1, pollIntervalMs: 60000 },
      requestTimeoutMs: 600_000,
      redisTimeoutMs: 100,
      authFailures: { perAddress: 20, perKey: 20, windowSeconds: 60 },
      drains: { scheduler: true, fastDelayMs: 1_000, achDelayMs: 3_000, pollIntervalMs: 250, concurrency: 4 },
      exchangeRateMaxAgeMs: 3_600_000,
      productImagesDir: `${process.cwd()}/data/product-images`,
      publicUrl: 'https://pay.example.com',
    })
    expect(loadConfig({ PORT: '65535', DATABASE_URL: 'sqlite:/tmp/x.db' }).database).toEqual({ kind: 'sqlite', filename: '/tmp/x.db' })
  })

  it('reads the failed-authentication limits at their bounds; the same defaults in every environment', () => {
    const low = { AUTH_FAILURES_PER_ADDRESS: '0', AUTH_FAILURES_PER_KEY: '0', AUTH_FAILURE_WINDOW_SECONDS: '1' }
    expect(loadConfig(low).authFailures).toEqual({ perAddress: 0, perKey: 0, windowSeconds: 1 })
    const high = { AUTH_FAILURES_PER_ADDRESS: '1000000', AUTH_FAILURES_PER_KEY: '1000000', AUTH_FAILURE_WINDOW_SECONDS: '86400' }
    expect(loadConfig(high).authFailures).toEqual({ perAddress: 1_000_000, perKey: 1_000_000, windowSeconds: 86_400 })
    expect(loadConfig({ NODE_ENV: 'test' }).authFailures).toEqual({ perAddress: 20, perKey: 20, windowSeconds: 60 })
    expect(loadConfig({ NODE_ENV: 'test', AUTH_FAILURES_PER_KEY: '5' }).authFailures).toEqual({ perAddress: 20, perKey: 5, windowSeconds: 60 })
    expect(loadConfig({ NODE_ENV: 'production', PUBLIC_URL: 'https://pay.example.com' }).authFailures).toEqual({ perAddress: 20, perKey: 20, windowSeconds: 60 })
    const bad: Record<string, string>[] = [
      { AUTH_FAILURES_PER_ADDRESS: '-1' },
      { AUTH_FAILURES_PER_ADDRESS: '1000001' },
      { AUTH_FAILURES_PER_KEY: 'ten' },
      { AUTH_FAILURES_PER_KEY: '' },
      { AUTH_FAILURE_WINDOW_SECONDS: '0' },
      { AUTH_FAILURE_WINDOW_SECONDS: '86401' },
      { AUTH_FAILURE_WINDOW_SECONDS: '1.5' },
    ]
    for (const env of bad) {
      const [name, value] = Object.entries(env)[0] ?? ['', '']
      expect(() => loadConfig(env)).toThrow(ConfigError)
      expect(() => loadConfig(env)).toThrow(`${name} must be an integer from`)
      expect(() => loadConfig(env)).toThrow(`(got ${JSON.stringify(value)})`)
    }
  })

  it('PUBLIC_URL: an http(s) origin, kept as its origin; unset outside production (the server then uses http://127.0.0.1:<its port>)', () => {
    expect(loadConfig({ PUBLIC_URL: 'https://Pay.Example.com/' }).publicUrl).toBe('https://pay.example.com')
    expect(loadConfig({ PUBLIC_URL: 'http://127.0.0.1:8080' }).publicUrl).toBe('http://127.0.0.1:8080')
    expect(loadConfig({ PUBLIC_URL: 'https://pay.example.com:443' }).publicUrl).toBe('https://pay.example.com')
    expect(loadConfig({ NODE_ENV: 'development' }).publicUrl).toBeUndefined()
    expect(loadConfig({ NODE_ENV: 'test', PUBLIC_URL: '' }).publicUrl).toBeUndefined()
    expect(defaultPublicUrl(3000)).toBe('http://127.0.0.1:3000')
    expect(publicUrlOf({ PORT: '4000' })).toBe('http://127.0.0.1:4000')
    expect(publicUrlOf({ PUBLIC_URL: 'https://pay.example.com' })).toBe('https://pay.example.com')
    for (const text of ['pay.example.com', 'ftp://pay.example.com', 'https://pay.example.com/checkout', 'https://pay.example.com/?a=1', 'https://pay.example.com/#x', 'https://user:secret@pay.example.com']) {
      expect(() => loadConfig({ PUBLIC_URL: text }), text).toThrow(ConfigError)
      expect(() => loadConfig({ PUBLIC_URL: text }), text).toThrow('PUBLIC_URL must be an origin, http(s)://host[:port] with no path')
    }
    expect(() => loadConfig({ PUBLIC_URL: 'https://user:secret@pay.example.com' })).not.toThrow(/secret/)
  })

  it('production without PUBLIC_URL, or with an http one, refuses to start saying why', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(ConfigError)
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow('PUBLIC_URL must be set in production')
    expect(() => loadConfig({ NODE_ENV: 'production', PUBLIC_URL: 'http://pay.example.com' })).toThrow('PUBLIC_URL must be https in production')
    expect(loadConfig({ NODE_ENV: 'production', PUBLIC_URL: 'https://pay.example.com' }).publicUrl).toBe('https://pay.example.com')
  })

  it('a leftover CHECKOUT_ENVIRONMENT refuses to start, naming it and what decides the money now, in every environment', () => {
    for (const env of [
      { CHECKOUT_ENVIRONMENT: 'sandbox' },
      { CHECKOUT_ENVIRONMENT: 'live' },
      { NODE_ENV: 'production', PUBLIC_URL: 'https://pay.example.com', CHECKOUT_ENVIRONMENT: 'sandbox' },
      { NODE_ENV: 'test', CHECKOUT_ENVIRONMENT: 'anything' },
    ]) {
      expect(() => loadConfig(env), JSON.stringify(env)).toThrow(ConfigError)
      expect(() => loadConfig(env), JSON.stringify(env)).toThrow(`CHECKOUT_ENVIRONMENT is no longer read (got ${JSON.stringify(env.CHECKOUT_ENVIRONMENT)}): a hosted payment takes the money of the key that created its invoice or payment link`)
      expect(() => publicUrlOf(env), JSON.stringify(env)).toThrow('CHECKOUT_ENVIRONMENT is no longer read')
    }
    expect(loadConfig({ CHECKOUT_ENVIRONMENT: '' }).publicUrl).toBeUndefined()
  })

  it('reads REDIS_TIMEOUT_MS at its bounds; 100 ms by default', () => {
    expect(loadConfig({}).redisTimeoutMs).toBe(100)
    expect(loadConfig({ REDIS_TIMEOUT_MS: '10' }).redisTimeoutMs).toBe(10)
    expect(loadConfig({ REDIS_TIMEOUT_MS: '10000' }).redisTimeoutMs).toBe(10_000)
  })

  it('reads REQUEST_TIMEOUT_MS at its bounds', () => {
    expect(loadConfig({ REQUEST_TIMEOUT_MS: '1000' }).requestTimeoutMs).toBe(1000)
    expect(loadConfig({ REQUEST_TIMEOUT_MS: '600000' }).requestTimeoutMs).toBe(600_000)
  })

  it('reads PostgreSQL and Redis URLs, with the pool size at its bounds', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://u@h:5432/db' }).database).toEqual({ kind: 'postgres', url: 'postgres://u@h:5432/db', poolSize: 10 })
    expect(loadConfig({ DATABASE_URL: 'postgresql://h/db', DATABASE_POOL_SIZE: '1' }).database).toEqual({ kind: 'postgres', url: 'postgresql://h/db', poolSize: 1 })
    expect(loadConfig({ DATABASE_URL: 'postgres://h/db', DATABASE_POOL_SIZE: '1000' }).database).toMatchObject({ poolSize: 1000 })
    const formation = 'postgres://u:pw@10.0.0.1:6001,[::1]:6002,db3/app?target_session_attrs=read-write&sslmode=disable'
    expect(loadConfig({ DATABASE_URL: formation }).database).toEqual({ kind: 'postgres', url: formation, poolSize: 10 })
  })

  it('splits a PostgreSQL URL listing several hosts into one URL a host, keeping user, database and parameters', () => {
    expect(postgresHostUrls('postgres://u:pw@10.0.0.1:6001,[::1]:6002,db3/app?target_session_attrs=read-write&sslmode=disable')).toEqual([
      'postgres://u:pw@10.0.0.1:6001/app?sslmode=disable',
      'postgres://u:pw@[::1]:6002/app?sslmode=disable',
      'postgres://u:pw@db3/app?sslmode=disable',
    ])
    expect(postgresHostUrls('postgresql://h:5432/db')).toEqual(['postgresql://h:5432/db'])
    expect(postgresHostUrls('postgres://h1:1,h2:65535/db?target_session_attrs=primary')).toEqual(['postgres://h1:1/db', 'postgres://h2:65535/db'])
    expect(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379/2' }).redisUrl).toBe('redis://127.0.0.1:6379/2')
    expect(loadConfig({ REDIS_URL: 'redis://h:6379' }).redisUrl).toBe('redis://h:6379')
    const sentinels = 'redis+sentinel://10.0.0.1:26379,[::1]:26380,s3/mymaster'
    expect(loadConfig({ REDIS_URL: sentinels }).redisUrl).toBe(sentinels)
  })

  it('reads a Redis Sentinel URL as the sentinels (26379 by default), the master name, the database and the nodes\' credentials', () => {
    expect(parseRedisSentinelUrl('redis+sentinel://10.0.0.1:26379,[::1]:26380,s3/mymaster')).toEqual({
      sentinels: [{ host: '10.0.0.1', port: 26379 }, { host: '::1', port: 26380 }, { host: 's3', port: 26379 }],
      name: 'mymaster',
      db: 0,
      username: undefined,
      password: undefined,
    })
    expect(parseRedisSentinelUrl('redis+sentinel://app:p%40ss@h1:1/cache.main-1/2')).toEqual({ sentinels: [{ host: 'h1', port: 1 }], name: 'cache.main-1', db: 2, username: 'app', password: 'p@ss' })
    expect(parseRedisSentinelUrl('redis+sentinel://:secret@h1/m')).toMatchObject({ username: undefined, password: 'secret' })
    expect(loadConfig({}).redisUrl).toBeUndefined()
  })

  const bad: [string, Record<string, string>, string][] = [
    ['PORT', { PORT: 'abc' }, 'PORT must be an integer from 0 to 65535 (got "abc")'],
    ['PORT', { PORT: '65536' }, 'PORT must be an integer from 0 to 65535 (got "65536")'],
    ['PORT', { PORT: '-1' }, 'PORT must be an integer'],
    ['PORT', { PORT: '' }, 'PORT must be an integer'],
    ['HOST', { HOST: '' }, 'HOST must be'],
    ['DATABASE_URL', { DATABASE_URL: 'postgres://x' }, 'DATABASE_URL must be postgres://user@host:port[,host:port…]/database (got "postgres://x")'],
    ['DATABASE_URL', { DATABASE_URL: 'postgres://u:hunter2@h/' }, 'DATABASE_URL must be postgres://user@host:port[,host:port…]/database (got "postgres://u:***@h/")'],
    ['DATABASE_URL', { DATABASE_URL: 'postgres://u@h1:5432,,h2:5432/db' }, 'DATABASE_URL must be postgres://user@host:port[,host:port…]/database (got "postgres://u@h1:5432,,h2:5432/db")'],
    ['DATABASE_URL', { DATABASE_URL: 'postgres://u@h1:5432,h2:65536/db' }, 'DATABASE_URL must be postgres://user@host:port[,host:port…]/database'],
    ['DATABASE_URL', { DATABASE_URL: 'postgres://u@h1:5432,h2:0/db' }, 'DATABASE_URL must be postgres://user@host:port[,host:port…]/database'],
    ['DATABASE_URL', { DATABASE_URL: 'postgres://u@h1:5432,h2:x/db' }, 'DATABASE_URL must be postgres://user@host:port[,host:port…]/database'],
    ['DATABASE_URL', { DATABASE_URL: 'postgres://u:hunter2@h1,h2:5432' }, 'DATABASE_URL must be postgres://user@host:port[,host:port…]/database (got "postgres://u:***@h1,h2:5432")'],
    ['DATABASE_URL', { DATABASE_URL: 'postgres://u@h1,h2/db?target_session_attrs=any' }, 'DATABASE_URL: target_session_attrs must be read-write or primary, the server writes (got "any")'],
    ['DATABASE_URL', { DATABASE_URL: 'postgres://u@h1/db?target_session_attrs=read-only' }, 'DATABASE_URL: target_session_attrs must be read-write or primary, the server writes (got "read-only")'],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://h/db' }, 'DATABASE_URL must be sqlite:PATH, sqlite::memory: or postgres://user@host:port/database'],
    ['DATABASE_POOL_SIZE', { DATABASE_POOL_SIZE: '0' }, 'DATABASE_POOL_SIZE must be an integer from 1 to 1000 (got "0")'],
    ['DATABASE_POOL_SIZE', { DATABASE_POOL_SIZE: '1001' }, 'DATABASE_POOL_SIZE must be an integer from 1 to 1000'],
    ['REDIS_URL', { REDIS_URL: 'http://h:6379' }, 'REDIS_URL must be redis://host:port[/db] or redis+sentinel://host:port[,host:port…]/master_name[/db] (got "http://h:6379")'],
    ['REDIS_URL', { REDIS_URL: 'redis://' }, 'REDIS_URL must be redis://host:port[/db]'],
    ['REDIS_URL', { REDIS_URL: 'redis://h:6379/x' }, 'REDIS_URL must be redis://host:port[/db]'],
    ['REDIS_URL', { REDIS_URL: 'redis+sentinel://h1:26379,h2:26379' }, 'REDIS_URL: not a sentinel list and a master name; expected redis+sentinel://host:port[,host:port…]/master_name[/db] (got "redis+sentinel://h1:26379,h2:26379")'],
    ['REDIS_URL', { REDIS_URL: 'redis+sentinel://h1:26379,h2:26379/' }, 'REDIS_URL: not a sentinel list and a master name'],
    ['REDIS_URL', { REDIS_URL: 'redis+sentinel://h1:26379,,h2/m' }, 'REDIS_URL: "" is not host[:port]'],
    ['REDIS_URL', { REDIS_URL: 'redis+sentinel://h1:65536/m' }, 'REDIS_URL: "h1:65536" is not host[:port]'],
    ['REDIS_URL', { REDIS_URL: 'redis+sentinel://h1:x/m' }, 'REDIS_URL: "h1:x" is not host[:port]'],
    ['REDIS_URL', { REDIS_URL: 'redis+sentinel://h1/m/x' }, 'REDIS_URL: not a sentinel list and a master name'],
    ['REDIS_URL', { REDIS_URL: 'redis+sentinel://u:hunter2@h1/m?x=1' }, 'REDIS_URL: not a sentinel list and a master name; expected redis+sentinel://host:port[,host:port…]/master_name[/db] (got "redis+sentinel://u:***@h1/m?x=1")'],
    ['DATABASE_URL', { DATABASE_URL: 'sqlite:' }, 'DATABASE_URL must be'],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent'],
    ['NODE_ENV', { NODE_ENV: 'staging' }, 'NODE_ENV must be one of development, production, test'],
    ['WEBHOOK_DISPATCHER', { WEBHOOK_DISPATCHER: 'yes' }, 'WEBHOOK_DISPATCHER must be one of on, off (got "yes")'],
    ['WEBHOOK_TIMEOUT_MS', { WEBHOOK_TIMEOUT_MS: '99' }, 'WEBHOOK_TIMEOUT_MS must be an integer from 100 to 120000 (got "99")'],
    ['WEBHOOK_TIMEOUT_MS', { WEBHOOK_TIMEOUT_MS: '120001' }, 'WEBHOOK_TIMEOUT_MS must be an integer from 100 to 120000'],
    ['WEBHOOK_TIMEOUT_MS', { WEBHOOK_TIMEOUT_MS: '1.5' }, 'WEBHOOK_TIMEOUT_MS must be an integer'],
    ['WEBHOOK_CONCURRENCY', { WEBHOOK_CONCURRENCY: '0' }, 'WEBHOOK_CONCURRENCY must be an integer from 1 to 10000 (got "0")'],
    ['WEBHOOK_CONCURRENCY', { WEBHOOK_CONCURRENCY: '10001' }, 'WEBHOOK_CONCURRENCY must be an integer from 1 to 10000'],
    ['WEBHOOK_CONCURRENCY_PER_APP', { WEBHOOK_CONCURRENCY_PER_APP: '0' }, 'WEBHOOK_CONCURRENCY_PER_APP must be an integer from 1 to 10000'],
    ['WEBHOOK_CONCURRENCY_PER_APP', { WEBHOOK_CONCURRENCY_PER_APP: '10001' }, 'WEBHOOK_CONCURRENCY_PER_APP must be an integer from 1 to 10000'],
    ['WEBHOOK_CONCURRENCY_PER_WEBHOOK', { WEBHOOK_CONCURRENCY_PER_WEBHOOK: '0' }, 'WEBHOOK_CONCURRENCY_PER_WEBHOOK must be an integer from 1 to 1000'],
    ['WEBHOOK_CONCURRENCY_PER_WEBHOOK', { WEBHOOK_CONCURRENCY_PER_WEBHOOK: '1001' }, 'WEBHOOK_CONCURRENCY_PER_WEBHOOK must be an integer from 1 to 1000'],
    ['WEBHOOK_POLL_MS', { WEBHOOK_POLL_MS: '9' }, 'WEBHOOK_POLL_MS must be an integer from 10 to 60000'],
    ['WEBHOOK_POLL_MS', { WEBHOOK_POLL_MS: '60001' }, 'WEBHOOK_POLL_MS must be an integer from 10 to 60000'],
    ['REDIS_TIMEOUT_MS', { REDIS_TIMEOUT_MS: '9' }, 'REDIS_TIMEOUT_MS must be an integer from 10 to 10000 (got "9")'],
    ['REDIS_TIMEOUT_MS', { REDIS_TIMEOUT_MS: '10001' }, 'REDIS_TIMEOUT_MS must be an integer from 10 to 10000'],
    ['REQUEST_TIMEOUT_MS', { REQUEST_TIMEOUT_MS: '999' }, 'REQUEST_TIMEOUT_MS must be an integer from 1000 to 600000 (got "999")'],
    ['REQUEST_TIMEOUT_MS', { REQUEST_TIMEOUT_MS: '600001' }, 'REQUEST_TIMEOUT_MS must be an integer from 1000 to 600000'],
    ['REQUEST_TIMEOUT_MS', { REQUEST_TIMEOUT_MS: '0' }, 'REQUEST_TIMEOUT_MS must be an integer from 1000 to 600000 (got "0")'],
    ['REQUEST_TIMEOUT_MS', { REQUEST_TIMEOUT_MS: '30s' }, 'REQUEST_TIMEOUT_MS must be an integer'],
    ['REQUEST_TIMEOUT_MS', { REQUEST_TIMEOUT_MS: '' }, 'REQUEST_TIMEOUT_MS must be an integer'],
  ]
  it.each(bad)('a bad %s stops start-up with one line naming it', (_name, env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError)
    expect(() => loadConfig(env)).toThrow(message)
  })
})

describe('the server refuses a configuration that would mix sandbox and live money', () => {
  afterAll(cleanUp)

  it.each([
    ['a leftover CHECKOUT_ENVIRONMENT', { NODE_ENV: 'production', PUBLIC_URL: 'https://pay.example.com', CHECKOUT_ENVIRONMENT: 'sandbox' }, 'CHECKOUT_ENVIRONMENT is no longer read'],
    ['production without PUBLIC_URL', { NODE_ENV: 'production' }, 'PUBLIC_URL must be set in production'],
  ])('%s: exits 1 before opening the database, with one line saying why', async (_name, vars, message) => {
    const { file, url } = freshDb('config-refused-')
    const running = launch(SERVER, [], { PORT: '0', DATABASE_URL: url, ...vars })
    expect(await exitWithin(running)).toEqual({ code: 1, signal: null })
    expect(running.stderr()).toContain(`devplatform: invalid configuration: ${message}`)
    expect(running.stdout()).toBe('')
    expect(existsSync(file)).toBe(false)
  })
})
