import { CHAINS, type Chain, describeAddressFormat, isChain, isValidChainAddress } from './chain-address.js'

/**
 * Cross-field rules that JSON Schema can't say. They run inside request validation (the
 * `x-rules` keyword), so one 400 lists schema failures and rule failures together.
 * Each rule reads only fields that have the right type; wrong types are the schema's to report.
 */
export type Rule = (body: Record<string, unknown>) => string[]
export type RuleSet = Record<string, Rule>

const BANK_RAILS = new Set(['ach', 'ach_push', 'ach_same_day', 'wire', 'sepa', 'swift', 'spei'])

function text(body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field]
  return typeof value === 'string' ? value : undefined
}

function addressProblem(field: string, chain: Chain, value: string): string | undefined {
  if (isValidChainAddress(chain, value)) return undefined
  return `${field} is not a valid ${chain} address: expected ${describeAddressFormat(chain)}`
}

export function liquidationAddressRule(body: Record<string, unknown>): string[] {
  const problems: string[] = []
  const chainValue = body.chain
  const chain = isChain(chainValue) ? chainValue : undefined
  const address = text(body, 'address')
  if (chain !== undefined && address !== undefined) {
    const problem = addressProblem('address', chain, address)
    if (problem !== undefined) problems.push(problem)
  }

  const returnAddress = text(body, 'return_address')
  if (returnAddress !== undefined && chain !== undefined) {
    if (chain === 'stellar') problems.push('return_address is not supported on the stellar chain')
    else {
      const problem = addressProblem('return_address', chain, returnAddress)
      if (problem !== undefined) problems.push(problem)
    }
  }

  const railValue = body.destination_payment_rail ?? 'ach'
  const destinationAddress = text(body, 'destination_address')
  if (typeof railValue === 'string') {
    if (BANK_RAILS.has(railValue) && body.external_account_id === undefined) {
      problems.push(`external_account_id is required when destination_payment_rail is ${railValue}`)
    }
    if (railValue === 'bridge_wallet' && body.bridge_wallet_id === undefined) {
      problems.push('bridge_wallet_id is required when destination_payment_rail is bridge_wallet')
    }
    if (isChain(railValue)) {
      if (body.destination_address === undefined) {
        problems.push(`destination_address is required when destination_payment_rail is ${railValue}`)
      } else if (destinationAddress !== undefined) {
        const problem = addressProblem('destination_address', railValue, destinationAddress)
        if (problem !== undefined) problems.push(problem)
      }
    } else if (destinationAddress !== undefined && (BANK_RAILS.has(railValue) || railValue === 'bridge_wallet')) {
      problems.push(`destination_address is only allowed when destination_payment_rail is a blockchain (${CHAINS.join(', ')})`)
    }
  }
  return problems
}

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]'])

function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname) || /^127(\.\d{1,3}){3}$/.test(hostname)
}

export function webhookUrlProblem(value: string, allowHttpLoopback: boolean): string | undefined {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return 'url must be a valid absolute URL'
  }
  if (url.username !== '' || url.password !== '') return 'url must not contain credentials'
  if (url.protocol === 'https:') return undefined
  if (url.protocol === 'http:' && allowHttpLoopback && isLoopbackHost(url.hostname)) return undefined
  return allowHttpLoopback
    ? 'url must use https (http is allowed only to a loopback host outside production)'
    : 'url must use https'
}

/** Standard Webhooks secret: whsec_ + base64 of 24 to 64 bytes. */
export function signingSecretProblem(value: string): string | undefined {
  const match = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(value)
  const encoded = match?.[1]
  const bytes = encoded !== undefined && encoded.length % 4 === 0 ? Buffer.from(encoded, 'base64').length : 0
  if (bytes >= 24 && bytes <= 64) return undefined
  return 'signing_secret must be whsec_ followed by base64 of 24 to 64 bytes'
}

export function createRules(options: { allowHttpLoopback: boolean }): RuleSet {
  return {
    liquidationAddress: liquidationAddressRule,
    webhook(body) {
      const problems: string[] = []
      const url = text(body, 'url')
      const secret = text(body, 'signing_secret')
      const urlProblem = url === undefined ? undefined : webhookUrlProblem(url, options.allowHttpLoopback)
      if (urlProblem !== undefined) problems.push(urlProblem)
      const secretProblem = secret === undefined ? undefined : signingSecretProblem(secret)
      if (secretProblem !== undefined) problems.push(secretProblem)
      return problems
    },
  }
}
