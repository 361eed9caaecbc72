/**
 * bench:sweep (issue 42, "Moving deposits on"): what moving a deposit from its receiving address to
 * the hot wallet costs, both ways, on a real anvil and the tests' TestStablecoin (OpenZeppelin
 * ERC20Permit, 6 decimals). `--deposits` receiving addresses (derived from a fixed test xprv) are
 * each minted an amount, then swept one after the other:
 *
 *   permit   the deposit key signs an EIP-2612 permit; the hot wallet sends permit + transferFrom
 *   top-up   the hot wallet sends the ETH one transfer costs at the current fees; the deposit key
 *            sends the transfer; what it did not burn stays on the address
 *
 * Prints gas per deposit (both transactions), the ETH each way spends and strands, and the wall time
 * of one sweep (automine: each transaction mined as it arrives). Figures, not pass/fail.
 *
 *   npm run bench:sweep [-- --deposits 20]
 */
import { parseArgs } from 'node:util'
import { formatGwei, type LocalAccount } from 'viem'
import { HDKey } from 'viem/accounts'
import { depositAccountAt, sweepByPermit, topUpAndTransfer } from '../src/chains/sweep.js'
import { startAnvil } from '../test/helpers/anvil.js'
import { balanceOf, deployToken, mint } from '../test/helpers/test-token.js'

const { values } = parseArgs({ options: { deposits: { type: 'string', default: '20' } } })
const deposits = Number(values.deposits)
if (!Number.isSafeInteger(deposits) || deposits < 1) throw new Error('--deposits must be a positive integer')
const log = (message: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`)

const XPRV = HDKey.fromMasterSeed(new Uint8Array(32).fill(11)).derive("m/44'/60'/0'").privateExtendedKey
const AMOUNT = 25_000_000n

interface Sample {
  gas: bigint
  /** The first and second transaction's gas. */
  parts: [bigint, bigint]
  fee: bigint
  /** Wei per gas the second transaction paid. */
  price: bigint
  /** Wei left on the deposit address after its sweep. */
  stranded: bigint
  ms: number
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN
}

function range(values: readonly bigint[]): string {
  const sorted = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  const low = sorted[0] ?? 0n
  const high = sorted[sorted.length - 1] ?? 0n
  const median = sorted[Math.floor(sorted.length / 2)] ?? 0n
  return low === high ? low.toLocaleString('en') : `${low.toLocaleString('en')}–${high.toLocaleString('en')} (median ${median.toLocaleString('en')})`
}

function report(name: string, first: string, second: string, samples: readonly Sample[]): void {
  const ms = samples.map((sample) => sample.ms).sort((a, b) => a - b)
  const sum = (pick: (sample: Sample) => bigint) => samples.reduce((total, sample) => total + pick(sample), 0n)
  console.log(`\n${name}, ${samples.length} deposits`)
  console.log(`  gas per deposit          ${range(samples.map((sample) => sample.gas))}`)
  console.log(`    ${first.padEnd(22)} ${range(samples.map((sample) => sample.parts[0]))}`)
  console.log(`    ${second.padEnd(22)} ${range(samples.map((sample) => sample.parts[1]))}`)
  console.log(`  ETH burnt per deposit    ${formatGwei(sum((sample) => sample.fee) / BigInt(samples.length))} gwei (mean, at anvil's fees)`)
  // In gas at the price paid, so the figure holds on a chain of other fees.
  const strandedGas = samples.map((sample) => (sample.price === 0n ? 0n : sample.stranded / sample.price))
  console.log(`  ETH on the address after ${formatGwei(sum((sample) => sample.stranded) / BigInt(samples.length))} gwei (mean), the price of ${range(strandedGas)} gas`)
  console.log(`  wall time per sweep      p50 ${quantile(ms, 0.5).toFixed(1)} ms, p95 ${quantile(ms, 0.95).toFixed(1)} ms, max ${(ms[ms.length - 1] ?? 0).toFixed(1)} ms`)
}

async function main(): Promise<void> {
  const anvil = await startAnvil({ accounts: 2 })
  try {
    const token = await deployToken(anvil, { name: 'USD Coin', symbol: 'USDC' })
    const hot = anvil.accounts[1]
    if (hot === undefined) throw new Error('anvil has no second account')
    const clients = { publicClient: anvil.publicClient, walletClient: anvil.walletClient }
    const accounts: LocalAccount[] = Array.from({ length: 2 * deposits }, (_, index) => depositAccountAt(XPRV, index))
    // Round 1 is each address's first sweep; round 2 a second deposit to the same addresses, whose
    // permit nonce (and, on the top-up path, leftover ETH) is no longer zero.
    for (const round of [1, 2]) {
      log(`round ${round}: minting to ${accounts.length} receiving addresses`)
      for (const account of accounts) await mint(anvil, token, account.address, AMOUNT)
      const base = (await anvil.publicClient.getBlock()).baseFeePerGas ?? 0n
      log(`base fee ${formatGwei(base)} gwei; sweeping ${deposits} by permit, ${deposits} by top-up, alternately`)
      const permit: Sample[] = []
      const topUp: Sample[] = []
      // Alternating keeps the two ways at the same base fee and the same hot-wallet state.
      for (let index = 0; index < deposits; index++) {
        const permitDeposit = accounts[2 * index] as LocalAccount
        let started = performance.now()
        const bypermit = await sweepByPermit({ ...clients, deposit: permitDeposit, hotWallet: hot, token, amount: AMOUNT })
        permit.push({
          ms: performance.now() - started,
          gas: bypermit.gasUsed,
          parts: [bypermit.permit.gasUsed, bypermit.transferFrom.gasUsed],
          fee: bypermit.permit.fee + bypermit.transferFrom.fee,
          price: bypermit.transferFrom.fee / bypermit.transferFrom.gasUsed,
          stranded: await anvil.publicClient.getBalance({ address: permitDeposit.address }),
        })
        const topUpDeposit = accounts[2 * index + 1] as LocalAccount
        started = performance.now()
        const bytopup = await topUpAndTransfer({ ...clients, deposit: topUpDeposit, hotWallet: hot, token, amount: AMOUNT })
        topUp.push({
          ms: performance.now() - started,
          gas: bytopup.gasUsed,
          parts: [bytopup.topUp.gasUsed, bytopup.transfer.gasUsed],
          fee: bytopup.topUp.fee + bytopup.transfer.fee,
          price: bytopup.transfer.fee / bytopup.transfer.gasUsed,
          stranded: bytopup.stranded,
        })
      }
      const hotBalance = await balanceOf(anvil, token, hot.address)
      if (hotBalance !== AMOUNT * BigInt(2 * deposits * round)) throw new Error(`the hot wallet holds ${hotBalance}, not every deposit`)
      const which = round === 1 ? "each address's first sweep" : 'a second deposit to the same addresses'
      report(`permit (hot wallet: permit + transferFrom), ${which}`, 'permit', 'transferFrom', permit)
      report(`top-up (hot wallet: ETH; deposit key: transfer), ${which}`, 'ETH top-up', 'token transfer', topUp)
    }
  } finally {
    await anvil.close()
  }
}

await main()
