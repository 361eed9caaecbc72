import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { callerOf } from '../../auth/authenticate.js'
import { ledgerEnvironmentOf } from '../../ledger/environment.js'
import type { LiveReceiving } from '../../ledger/money-context.js'
import { WALLET_CURRENCIES, WalletsRepository } from './repository.js'
import { errorResponses } from '../../schemas/common.js'
import { toWallet } from './objects.js'
import { walletsOf } from './provision.js'
import { WalletListSchema, type WalletList } from './schemas.js'
import { operation } from '../manifest.js'
import { walletsManifest } from './manifest.js'

export interface WalletRoutesOptions {
  receiving: LiveReceiving
}

export const walletRoutes: FastifyPluginAsyncTypebox<WalletRoutesOptions> = async (app, { receiving }) => {
  const repository = new WalletsRepository(app.db)

  app.route({
    ...operation(walletsManifest, 'walletControllerGetWallets'),
    schema: {
      tags: ['wallets'],
      summary: "List the application's wallets",
      description:
        "One wallet per chain (base, ethereum, solana), made on first use, each holding USDC and EURC. A development key sees the sandbox's wallets (made-up addresses), a production key the live ones: each live wallet's address is a receiving address on its chain, or null with `address_unavailable_reason` while live deposits on the chain are off.",
      response: { 200: WalletListSchema, ...errorResponses(401, 403, 429) },
    },
    handler: async (request): Promise<WalletList> => {
      const { appId, environment } = callerOf(request)
      const wallets = await walletsOf(app, ledgerEnvironmentOf(environment), appId, receiving)
      const holdings = await repository.holdings(wallets, WALLET_CURRENCIES)
      const application = (await app.repos.apps.findApp(appId)) ?? { id: appId, name: '' }
      return { data: wallets.map((wallet) => toWallet(wallet, holdings.filter((holding) => holding.wallet === wallet), application, receiving)) }
    },
  })
}
