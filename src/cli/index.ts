#!/usr/bin/env node
import { parseArgs } from 'node:util'
import { ENVIRONMENTS, type Environment, hourlyLimitOf } from '../auth/credentials.js'
import { isScope, type Scope, SCOPES } from '../auth/scopes.js'
import { ConfigError, DEFAULT_DATABASE_URL, parseDatabaseUrl } from '../config.js'
import { type Db, openDatabase } from '../db/database.js'
import { type ApiKey, AppsRepository } from '../db/repositories/apps.js'

/** A mistake in how the command was called (or an unknown id): one line on stderr, exit 2. */
class UsageError extends Error {}

const USAGE = `usage: devplatform <command> [--json]
  apps create --name NAME
  apps list
  keys create --app APP_ID [--environment production|development] [--scopes a,b] [--rate-limit N]
  keys list --app APP_ID
  keys deactivate --key CLIENT_KEY_OR_ID
The database is DATABASE_URL (default ${DEFAULT_DATABASE_URL}).`

type Row = Record<string, unknown>
type Output = Row | Row[]

interface Flags {
  json: boolean
  name?: string
  app?: string
  environment?: string
  scopes?: string
  'rate-limit'?: string
  key?: string
}

const FLAGS_BY_COMMAND: Record<string, readonly (keyof Flags)[]> = {
  'apps create': ['name'],
  'apps list': [],
  'keys create': ['app', 'environment', 'scopes', 'rate-limit'],
  'keys list': ['app'],
  'keys deactivate': ['key'],
}

function parse(argv: string[]): { command: string; flags: Flags } {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        json: { type: 'boolean', default: false },
        name: { type: 'string' },
        app: { type: 'string' },
        environment: { type: 'string' },
        scopes: { type: 'string' },
        'rate-limit': { type: 'string' },
        key: { type: 'string' },
      },
    })
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error))
  }
  const command = parsed.positionals.join(' ')
  const allowed = FLAGS_BY_COMMAND[command]
  if (allowed === undefined) {
    throw new UsageError(command === '' ? 'missing command (try: apps create, apps list, keys create, keys list, keys deactivate)' : `unknown command: ${command}`)
  }
  const flags: Flags = { ...parsed.values, json: parsed.values.json === true }
  for (const name of Object.keys(parsed.values)) {
    if (name !== 'json' && !allowed.includes(name as keyof Flags)) throw new UsageError(`option --${name} does not apply to "${command}"`)
  }
  return { command, flags }
}

function required(flags: Flags, name: 'name' | 'app' | 'key'): string {
  const value = flags[name]
  if (value === undefined || value.trim() === '') throw new UsageError(`missing required option --${name}`)
  return value
}

/** A key as the CLI prints it; the secret only right after creation. */
function keyOutput(key: ApiKey & { client_secret?: string }): Row {
  return {
    id: key.id,
    app_id: key.app_id,
    client_key: key.client_key,
    ...(key.client_secret === undefined ? {} : { client_secret: key.client_secret }),
    environment: key.environment,
    scopes: key.scopes,
    rate_limit_per_hour: hourlyLimitOf(key),
    active: key.active,
    created_at: key.created_at,
  }
}

function parseScopes(text: string | undefined): Scope[] {
  if (text === undefined) return [...SCOPES]
  const names = text.split(',').map((s) => s.trim()).filter((s) => s !== '')
  if (names.length === 0) throw new UsageError('--scopes needs at least one scope')
  const unknown = names.filter((name) => !isScope(name))
  if (unknown.length > 0) throw new UsageError(`unknown scope ${unknown.join(', ')} (known: ${SCOPES.join(', ')})`)
  return [...new Set(names.filter(isScope))]
}

function parseEnvironment(text: string | undefined): Environment {
  if (text === undefined) return 'production'
  const found = ENVIRONMENTS.find((e) => e === text)
  if (found === undefined) throw new UsageError(`--environment must be production or development (got ${text})`)
  return found
}

function parseRateLimit(text: string | undefined): number | null {
  if (text === undefined) return null
  if (!/^\d{1,9}$/.test(text) || Number(text) < 1) throw new UsageError(`--rate-limit must be a whole number of requests per hour, at least 1 (got ${text})`)
  return Number(text)
}

async function run(command: string, flags: Flags, apps: AppsRepository): Promise<Output> {
  switch (command) {
    case 'apps create': {
      const app = await apps.createApp(required(flags, 'name'))
      return { ...app }
    }
    case 'apps list':
      return (await apps.listApps()).map((app) => ({ ...app }))
    case 'keys create': {
      const appId = required(flags, 'app')
      const environment = parseEnvironment(flags.environment)
      const scopes = parseScopes(flags.scopes)
      const rateLimitOverride = parseRateLimit(flags['rate-limit'])
      if ((await apps.findApp(appId)) === undefined) throw new UsageError(`unknown application: ${appId}`)
      return keyOutput(await apps.createKey({ appId, environment, scopes, rateLimitOverride }))
    }
    case 'keys list': {
      const appId = required(flags, 'app')
      if ((await apps.findApp(appId)) === undefined) throw new UsageError(`unknown application: ${appId}`)
      return (await apps.listKeys(appId)).map(keyOutput)
    }
    case 'keys deactivate': {
      const key = await apps.deactivateKey(required(flags, 'key'))
      if (key === undefined) throw new UsageError(`unknown key: ${flags.key ?? ''}`)
      return keyOutput(key)
    }
    default:
      throw new UsageError(`unknown command: ${command}`)
  }
}

function cell(value: unknown): string {
  if (Array.isArray(value)) return value.join(',')
  return value === null || value === undefined ? '' : String(value)
}

/** A readable table: one header line, one line per row, columns padded. */
function table(output: Output): string {
  const rows = Array.isArray(output) ? output : [output]
  if (rows.length === 0) return '(none)\n'
  const columns = Object.keys(rows[0] ?? {})
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)))
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i] ?? 0)).join('  ').trimEnd()
  return [line(columns), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join('\n') + '\n'
}

export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let db: Db | undefined
  try {
    if (argv.includes('--help') || argv.includes('-h')) {
      process.stdout.write(`${USAGE}\n`)
      return 0
    }
    const { command, flags } = parse(argv)
    let location
    try {
      location = parseDatabaseUrl(env.DATABASE_URL ?? DEFAULT_DATABASE_URL)
    } catch (error) {
      if (error instanceof ConfigError) throw new UsageError(error.message)
      throw error
    }
    db = await openDatabase(location)
    const output = await run(command, flags, new AppsRepository(db))
    process.stdout.write(flags.json ? `${JSON.stringify(output)}\n` : table(output))
    if (!flags.json && command === 'keys create') {
      process.stdout.write('The client secret is shown only now; store it safely.\n')
    }
    return 0
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`devplatform: ${error.message}\n`)
      return 2
    }
    process.stderr.write(`devplatform: ${error instanceof Error ? error.message : String(error)}\n`)
    return 1
  } finally {
    await db?.destroy()
  }
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code
})
