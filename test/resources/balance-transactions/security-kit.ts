import { balanceTransactionsManifest } from '../../../src/resources/balance-transactions/manifest.js'
import { defineSecurityKit } from '../../auth/security-kit.js'

// One list, no path parameter: what the kit derives from the manifest is the whole of it.
export const securityKit = defineSecurityKit(balanceTransactionsManifest, {})
