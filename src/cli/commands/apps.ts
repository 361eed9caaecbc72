import { productImagesDirOf } from '../../config.js'
import { DeliveryNotifier } from '../../delivery/notifier.js'
import type { Db } from '../../db/database.js'
import { AppsRepository } from '../../apps/repository.js'
import { transactOn } from '../../events/transact.js'
import { readFile } from 'node:fs/promises'
import { changeBranding, findBrand, storeLogo } from '../../resources/branding/public.js'
import { DirectoryImageStore } from '../../resources/products/image-store.js'
import { answer, type Command, type Flags } from '../command.js'
import { cliHooks, cliMoneyContext } from '../money-context.js'
import { AppDeletionRefused, deleteApp } from '../delete-app.js'
import { required } from '../options.js'
import { type Printed, rows } from '../render.js'
import { UsageError } from '../usage-error.js'

const appsCreate: Command = {
  name: 'apps create',
  usage: '  apps create --name NAME',
  options: ['name'],
  run: answer(async (db, { flags }) => {
    const app = await new AppsRepository(db).createApp(required(flags, 'name'))
    return rows({ ...app })
  }),
}

const appsList: Command = {
  name: 'apps list',
  usage: '  apps list',
  options: [],
  run: answer(async (db) => rows((await new AppsRepository(db).listApps()).map((app) => ({ ...app })))),
}

const appsDelete: Command = {
  name: 'apps delete',
  usage: `  apps delete --app APP_ID --confirm APP_ID
      delete an application: its keys, customers, liquidation addresses, taxes and products (with
      their images) go, its webhooks stop at once; its ledger, drains, wallets, events and delivery
      logs stay; refused while it holds live money`,
  options: ['app', 'confirm'],
  run: answer((db, { flags, env }) => deleteApplication(db, flags, env)),
}

const appsBrand: Command = {
  name: 'apps brand',
  usage: `  apps brand --app APP_ID [--display-name NAME] [--color #RRGGBB] [--support-email EMAIL] [--logo FILE | --no-logo]
      the merchant the hosted pages show; an empty value puts a field back to its default; with no
      other option, prints the brand as the pages show it`,
  options: ['app', 'display-name', 'color', 'support-email', 'logo', 'no-logo'],
  run: answer(async (db, { flags, env }) => {
    const appId = required(flags, 'app')
    if ((await new AppsRepository(db).findApp(appId)) === undefined) throw new UsageError(`unknown application: ${appId}`)
    if (flags.logo !== undefined && flags['no-logo'] === true) throw new UsageError('give --logo FILE or --no-logo, not both')
    const store = new DirectoryImageStore(productImagesDirOf(env))
    const logo = flags.logo === undefined ? undefined : await storeLogo(store, await readFile(flags.logo)).catch((error: unknown) => {
      throw new UsageError(error instanceof Error ? error.message : String(error))
    })
    let replacedLogo: string | null
    try {
      ;({ replacedLogo } = await changeBranding(db, appId, { display_name: flags['display-name'], brand_color: flags.color, support_email: flags['support-email'], ...(logo === undefined ? {} : { logo }), ...(flags['no-logo'] === true ? { logo: null } : {}) }))
    } catch (error) {
      if (logo !== undefined) await store.remove([logo.key])
      throw new UsageError(error instanceof Error ? error.message : String(error))
    }
    if (replacedLogo !== null) await store.remove([replacedLogo])
    return rows({ app_id: appId, ...(await findBrand(db, appId)) })
  }),
}

export const APPS_COMMANDS: readonly Command[] = [appsCreate, appsList, appsBrand, appsDelete]

/**
 * `apps delete`: refused (exit 2, nothing changed) unless --confirm repeats the application's id,
 * and while it holds live money; the image files of its products are removed once the deletion
 * has committed (a failure there is reported on stderr, the deletion stands).
 */
async function deleteApplication(db: Db, flags: Flags, env: NodeJS.ProcessEnv): Promise<Printed> {
  const appId = required(flags, 'app')
  if (flags.confirm === undefined) throw new UsageError(`"apps delete" needs --confirm ${appId}: it deletes the application's keys and data for good`)
  if (flags.confirm !== appId) throw new UsageError(`--confirm must repeat the application's id (got ${flags.confirm} for ${appId}); nothing was changed`)
  let deletion
  try {
    deletion = await deleteApp(transactOn(db, new DeliveryNotifier(), cliHooks(env, cliMoneyContext(env))), appId)
  } catch (error) {
    if (error instanceof AppDeletionRefused) throw new UsageError(error.message)
    throw error
  }
  const { image_ids: imageIds, ...summary } = deletion
  let imageFiles = { removed: imageIds.length, not_removed: 0 }
  try {
    await new DirectoryImageStore(productImagesDirOf(env)).remove(imageIds)
  } catch (error) {
    imageFiles = { removed: 0, not_removed: imageIds.length }
    process.stderr.write(
      `devplatform: warning: the application is deleted, but its ${imageIds.length} product image files could not be removed from ${productImagesDirOf(env)} (${error instanceof Error ? error.message : String(error)}); no product names them any more: ${imageIds.join(', ')}\n`,
    )
  }
  const result = { ...summary, image_files: imageFiles }
  const removed = Object.entries(summary.removed).map(([table, count]) => `${count} ${table}`).join(', ')
  const again = summary.already_deleted ? ' (deleted before: what was left is removed now)' : ''
  return {
    json: result,
    text:
      `application ${summary.app.id} ${JSON.stringify(summary.app.name)} deleted at ${summary.app.deleted_at}${again}\n` +
      `removed: ${removed}, ${imageFiles.removed} image files; ${summary.webhooks_stopped} webhooks stopped\n` +
      'kept: its ledger, drains, transfers, test payments, invoices, wallets, events and delivery logs\n',
  }
}
