import { AppsRepository } from '../../apps/repository.js'
import { InvalidRequest } from '../../errors.js'
import { CONSOLE_ROLES, createConsoleLink, DEFAULT_LINK_TTL_SECONDS, DEFAULT_ROLE, isRole, ttlSecondsOf } from '../../resources/console/public.js'
import { answer, cliPublicUrl, type Command } from '../command.js'
import { required } from '../options.js'
import { rows } from '../render.js'
import { UsageError } from '../usage-error.js'

const consoleLink: Command = {
  name: 'console link',
  usage: `  console link --app APP_ID [--role viewer|admin] [--ttl 15m]
      a single-use link to the application's console (docs/console.md), shown once: it opens one
      session, within --ttl (1m to 24h, default 15m); viewer (the default) reads, admin also acts`,
  options: ['app', 'role', 'ttl'],
  run: answer(async (db, { flags, env }) => {
    const appId = required(flags, 'app')
    if ((await new AppsRepository(db).findApp(appId)) === undefined) throw new UsageError(`unknown application: ${appId}`)
    const role = flags.role ?? DEFAULT_ROLE
    if (!isRole(role)) throw new UsageError(`--role must be ${CONSOLE_ROLES.join(' or ')} (got ${role})`)
    let ttlSeconds = DEFAULT_LINK_TTL_SECONDS
    try {
      if (flags.ttl !== undefined) ttlSeconds = ttlSecondsOf(flags.ttl)
    } catch (error) {
      if (error instanceof InvalidRequest) throw new UsageError(`--${error.message}`)
      throw error
    }
    const link = await createConsoleLink(db, { appId, role, ttlSeconds, publicUrl: cliPublicUrl(env) })
    const printed = rows({ ...link })
    return { ...printed, text: `${printed.text}The link opens one session, once; it is shown only now.\n` }
  }),
}

export const CONSOLE_COMMANDS: readonly Command[] = [consoleLink]
