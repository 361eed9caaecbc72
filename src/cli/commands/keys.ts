import { ENVIRONMENTS, type Environment, hourlyLimitOf } from '../../keys/credentials.js'
import { DEFAULT_SCOPES, isScope, SCOPES } from '../../resources/index.js'
import { type ApiKey, AppsRepository } from '../../apps/repository.js'
import { answer, type Command, type Flags } from '../command.js'
import { expiryOf, graceSecondsOf, MAX_GRACE_SECONDS } from '../key-options.js'
import { required } from '../options.js'
import { type Row, rows } from '../render.js'
import { UsageError } from '../usage-error.js'

const keysCreate: Command = {
  name: 'keys create',
  usage: '  keys create --app APP_ID [--environment production|development] [--scopes a,b] [--rate-limit N]',
  options: ['app', 'environment', 'scopes', 'rate-limit'],
  run: answer(async (db, { flags }) => {
    const apps = new AppsRepository(db)
    const appId = required(flags, 'app')
    const environment = parseEnvironment(flags.environment)
    const scopes = parseScopes(flags.scopes)
    const rateLimitOverride = parseRateLimit(flags['rate-limit'])
    if ((await apps.findApp(appId)) === undefined) throw new UsageError(`unknown application: ${appId}`)
    const printed = rows(keyOutput(await apps.createKey({ appId, environment, scopes, rateLimitOverride })))
    return { ...printed, text: `${printed.text}The client secret is shown only now; store it safely.\n` }
  }),
}

const keysList: Command = {
  name: 'keys list',
  usage: '  keys list --app APP_ID',
  options: ['app'],
  run: answer(async (db, { flags }) => {
    const apps = new AppsRepository(db)
    const appId = required(flags, 'app')
    if ((await apps.findApp(appId)) === undefined) throw new UsageError(`unknown application: ${appId}`)
    return rows((await apps.listKeys(appId)).map(keyOutput))
  }),
}

const keysDeactivate: Command = {
  name: 'keys deactivate',
  usage: '  keys deactivate --key CLIENT_KEY_OR_ID',
  options: ['key'],
  run: answer(async (db, { flags }) => {
    const key = await new AppsRepository(db).deactivateKey(required(flags, 'key'))
    if (key === undefined) throw new UsageError(`unknown key: ${flags.key ?? ''}`)
    return rows(keyOutput(key))
  }),
}

const keysRotate: Command = {
  name: 'keys rotate',
  usage: `  keys rotate --key CLIENT_KEY_OR_ID [--grace SECONDS]
      a new client secret, printed once; the old one keeps working for --grace seconds (0 to
      ${MAX_GRACE_SECONDS}, default 86400), and one rotated before stops at once`,
  options: ['key', 'grace'],
  run: answer(async (db, { flags }) => {
    const apps = new AppsRepository(db)
    const graceSeconds = graceSecondsOf(flags.grace)
    const rotated = await apps.rotateSecret((await activeKey(apps, flags)).id, graceSeconds * 1000)
    if (rotated === undefined) throw new UsageError(`key ${flags.key ?? ''} was deactivated meanwhile; nothing was changed`)
    const printed = rows(keyOutput(rotated))
    const old = rotated.previous_secret_expires_at === null ? 'The old secret stopped working.' : `The old secret keeps working until ${rotated.previous_secret_expires_at}.`
    return { ...printed, text: `${printed.text}The new client secret is shown only now; store it safely. ${old}\n` }
  }),
}

const keysExpire: Command = {
  name: 'keys expire',
  usage: `  keys expire --key CLIENT_KEY_OR_ID (--at ISO_8601_TIME | --in SECONDS | --never)
      the key is refused from then on (403 API key has expired); --never removes the expiry`,
  options: ['key', 'at', 'in', 'never'],
  run: answer(async (db, { flags }) => {
    const apps = new AppsRepository(db)
    const expiresAt = expiryOf(flags, Date.now())
    const key = await apps.setExpiry((await activeKey(apps, flags)).id, expiresAt)
    if (key === undefined) throw new UsageError(`key ${flags.key ?? ''} was deactivated meanwhile; nothing was changed`)
    return rows(keyOutput(key))
  }),
}

const keysScopes: Command = {
  name: 'keys scopes',
  usage: `  keys scopes --key CLIENT_KEY_OR_ID --scopes a,b
      replaces the key's scopes (the names keys create takes)`,
  options: ['key', 'scopes'],
  run: answer(async (db, { flags }) => {
    const apps = new AppsRepository(db)
    const scopes = parseScopes(required(flags, 'scopes'))
    const key = await apps.setScopes((await activeKey(apps, flags)).id, scopes)
    if (key === undefined) throw new UsageError(`key ${flags.key ?? ''} was deactivated meanwhile; nothing was changed`)
    return rows(keyOutput(key))
  }),
}

export const KEYS_COMMANDS: readonly Command[] = [keysCreate, keysList, keysDeactivate, keysRotate, keysExpire, keysScopes]

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
    expires_at: key.expires_at,
    previous_secret_expires_at: key.previous_secret_expires_at,
    created_at: key.created_at,
  }
}

/** The key `--key` names, which must be active: a deactivated key stays as it was deactivated. */
async function activeKey(apps: AppsRepository, flags: Flags): Promise<ApiKey> {
  const named = required(flags, 'key')
  const key = await apps.findKey(named)
  if (key === undefined) throw new UsageError(`unknown key: ${named}`)
  if (!key.active) throw new UsageError(`key ${named} is deactivated; a deactivated key cannot be changed`)
  return key
}

function parseScopes(text: string | undefined): string[] {
  if (text === undefined) return [...DEFAULT_SCOPES]
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
