import { transfersManifest } from '../../../src/resources/transfers/manifest.js'
import { created, defineSecurityKit } from '../../auth/security-kit.js'

const transferNotFound = { notFound: 'Transfer not found', readBack: 'transferControllerFindOne' }
/** A create's wallet is another application's: nothing is made, so the owner's list is read back. */
const walletNotFound = { notFound: 'Bridge wallet not found', readBack: 'transferControllerFindAll' }

export const securityKit = defineSecurityKit(transfersManifest, {
  /** a sandbox direct-wallet transfer awaiting funds */
  fixtures: async ({ server, sandboxKey, made }) => ({
    transfer: await created(server, sandboxKey, '/api/v0/transfers/direct-wallet', { walletId: made.id('sandboxWallet'), network: 'base', stableCoinCurrency: 'usdc', amount: 1 }),
  }),
  params: { id: 'transfer' },
  // Sandbox money: the development key's.
  environment: 'development',
  operations: {
    transferControllerCreateDirectBankTransfer: {
      body: (fixtures) => ({ walletId: fixtures.id('sandboxWallet'), paymentRail: 'wire', sourceCurrency: 'usd', destinationCurrency: 'usdc', amount: 1 }),
      tenancy: walletNotFound,
    },
    transferControllerCreateDirectWalletTransfer: {
      body: (fixtures) => ({ walletId: fixtures.id('sandboxWallet'), network: 'base', stableCoinCurrency: 'usdc', amount: 1 }),
      tenancy: walletNotFound,
    },
    transferControllerCreateExternalBankTransfer: {
      body: (fixtures) => ({ sourceWalletId: fixtures.id('sandboxWallet'), sourceCurrency: 'usdc', destinationCurrency: 'usd', destinationPaymentRail: 'ach', external_account_id: 'ext_1', amount: 1 }),
      tenancy: walletNotFound,
    },
    transferControllerCreateExternalStablecoinTransfer: {
      body: (fixtures) => ({ sourceWalletId: fixtures.id('sandboxWallet'), sourceCurrency: 'usdc', destinationCurrency: 'usdc', beneficiaryId: 'b_1', amount: 1 }),
      tenancy: walletNotFound,
    },
    transferControllerCreateStablecoinConversion: {
      body: (fixtures) => ({ walletId: fixtures.id('sandboxWallet'), sourceNetwork: 'base', sourceCurrency: 'usdc', destinationCurrency: 'eurc', amount: 1 }),
      tenancy: walletNotFound,
    },
    transferControllerFindOne: { tenancy: transferNotFound },
    transferControllerCancel: { tenancy: transferNotFound },
    transferControllerSimulateFunds: { tenancy: transferNotFound },
  },
})
