import type { Db } from '../db/database.js'
import { AppsRepository } from '../apps/repository.js'
import type { Transact } from '../events/transact.js'
import { imagesOf, isUploaded } from '../resources/products/repository.js'
import { WebhooksRepository } from '../resources/webhooks/repository.js'
import { TABLES } from '../modules/index.js'
import type { ApplicationTable } from '../modules/module.js'

/**
 * The tables holding an application's rows that its deletion removes, in the order it removes
 * them: the reverse of MODULES' order (a liquidation address before its customer); its keys go
 * last, with the mark on the application. Every table with an app_id column is here or in
 * KEPT_TABLES (the compiler holds each declaration to that, and a test the database).
 */
export const REMOVED_TABLES: readonly ApplicationTable[] = TABLES.flatMap((table) => (table.appDeletion === 'removed' ? [table.name] : [])).reverse()

/** The tables whose rows of a deleted application stay, and why (docs/cli.md#apps-delete). */
export const KEPT_TABLES: Readonly<Record<string, string>> = Object.fromEntries(TABLES.flatMap((table) => (table.appDeletion === 'kept' ? [[table.name, table.reason]] : [])))

/** Why an application may not be deleted now; nothing was changed. */
export class AppDeletionRefused extends Error {}

export interface AppDeletion {
  app: { id: string; name: string; created_at: string; deleted_at: string }
  /** it had been deleted before: this deletion removed what was left (see docs/cli.md#apps-delete) */
  already_deleted: boolean
  /** rows removed, by table */
  removed: Record<string, number>
  /** webhooks stopped as DELETE /webhooks/{id} stops one */
  webhooks_stopped: number
  /** the uploaded images of its products and its logo, whose files are to be removed once this has committed */
  image_ids: string[]
}

/**
 * Deletes an application in one transaction: its webhooks stop as DELETE /webhooks/{id} stops
 * one (pending deliveries canceled; attempts on the wire aborted once committed, in other
 * processes too on PostgreSQL), the rows of REMOVED_TABLES go, its keys with them (refused from
 * the next request on), and the application is marked deleted. Refused, with nothing changed,
 * while it holds live money. Run again on a deleted application, it removes what is left.
 */
export async function deleteApp(transact: Transact, appId: string): Promise<AppDeletion> {
  return transact(async (tx) => {
    const apps = new AppsRepository(tx.db, tx.unit)
    const app = await apps.lockApp(appId)
    if (app === undefined) throw new AppDeletionRefused(`unknown application: ${appId}`)
    await refuseWhileHoldingLiveMoney(tx.db, appId)

    const webhooks = new WebhooksRepository(tx.db, tx.unit)
    const live = await tx.db.selectFrom('webhooks').select('id').where('app_id', '=', appId).where('deleted_at', 'is', null).execute()
    for (const webhook of live) await webhooks.delete(appId, webhook.id)

    const products = await tx.db.selectFrom('products').select('images').where('app_id', '=', appId).execute()
    const logos = await tx.db.selectFrom('app_branding').select('logo_image_id').where('app_id', '=', appId).execute()
    const imageIds = [...products.flatMap((row) => imagesOf(row).filter(isUploaded).map((image) => image.id)), ...logos.flatMap((row) => (row.logo_image_id === null ? [] : [row.logo_image_id]))]

    const removed: Record<string, number> = {}
    for (const table of REMOVED_TABLES) {
      if (table === 'api_keys') removed.api_keys = await apps.deleteApp(appId)
      else removed[table] = await deleteRowsOf(tx.db, table, appId)
    }
    const marked = await apps.lockApp(appId)
    return {
      app: { id: app.id, name: app.name, created_at: app.created_at, deleted_at: marked?.deleted_at ?? '' },
      already_deleted: app.deleted_at !== null,
      removed,
      webhooks_stopped: live.length,
      image_ids: imageIds,
    }
  })
}

async function deleteRowsOf(db: Db, table: Exclude<ApplicationTable, 'api_keys'>, appId: string): Promise<number> {
  const result = await db.deleteFrom(table).where('app_id', '=', appId).executeTakeFirst()
  return Number(result.numDeletedRows)
}

/**
 * Live money is never deleted with its owner: a live account of the application with a balance
 * (posted or pending), or a live drain still moving, refuses the deletion. Sandbox money does not:
 * its ledger stays as it is, and a sandbox drain still moving ends on its next step (its
 * liquidation address gone, it is canceled and its funds stay in clearing).
 */
async function refuseWhileHoldingLiveMoney(db: Db, appId: string): Promise<void> {
  const account = await db
    .selectFrom('ledger_accounts')
    .select(['id', 'kind', 'currency'])
    .where('app_id', '=', appId)
    .where('environment', '=', 'live')
    .where((eb) => eb.or([eb('debits_posted', '<>', eb.ref('credits_posted')), eb('debits_pending', '<>', '0'), eb('credits_pending', '<>', '0')]))
    .orderBy('id')
    .executeTakeFirst()
  if (account !== undefined) {
    throw new AppDeletionRefused(
      `application ${appId} holds live money (its ${account.kind} account ${account.id} in ${account.currency.toUpperCase()} has a balance): it cannot be deleted until every live balance is zero; nothing was changed`,
    )
  }
  const drain = await db.selectFrom('drains').select(['id', 'state']).where('app_id', '=', appId).where('environment', '=', 'live').where('next_step_at', 'is not', null).orderBy('id').executeTakeFirst()
  if (drain !== undefined) {
    throw new AppDeletionRefused(`application ${appId} has a live drain in flight (${drain.id}, ${drain.state}): it cannot be deleted until it has ended; nothing was changed`)
  }
  const transfer = await db
    .selectFrom('transfers')
    .select(['id', 'state'])
    .where('app_id', '=', appId)
    .where('environment', '=', 'live')
    .where((eb) => eb.or([eb('next_step_at', 'is not', null), eb('state', '=', 'awaiting_funds')]))
    .orderBy('id')
    .executeTakeFirst()
  if (transfer !== undefined) {
    throw new AppDeletionRefused(`application ${appId} has a live transfer in flight (${transfer.id}, ${transfer.state}): it cannot be deleted until it has ended or been canceled; nothing was changed`)
  }
}
