import type { Db } from '../db/database.js'
import { isoOf } from '../db/time.js'
import type { Transact } from '../events/transact.js'
import type { Transaction } from '../events/transact.js'
import { advanceDrain, type DrainContext } from '../resources/drains/lifecycle.js'
import { DrainsRepository } from '../resources/drains/repository.js'
import { advanceTransfer } from '../resources/transfers/lifecycle.js'
import { TransfersRepository } from '../resources/transfers/repository.js'

/** One kind of money movement the scheduler advances: what is due, and one step of one of them. */
interface Movement {
  name: string
  due(db: Db, nowIso: string, limit: number): Promise<string[]>
  advance(tx: Transaction, context: DrainContext, id: string): Promise<boolean>
}

const MOVEMENTS: readonly Movement[] = [
  { name: 'drain', due: (db, nowIso, limit) => new DrainsRepository(db).due(nowIso, limit), advance: advanceDrain },
  { name: 'transfer', due: (db, nowIso, limit) => new TransfersRepository(db).due(nowIso, limit), advance: advanceTransfer },
]

export interface MoneySchedulerOptions {
  /** how often it looks for due drains when it found none */
  pollIntervalMs: number
  /** drains advanced at once (each in its own transaction) */
  concurrency: number
}

interface SchedulerLog {
  error(details: object, message: string): void
}

/** Movements of each kind looked at per scan. */
const BATCH = 64

/**
 * Advances due drains and transfers, in every server and worker that runs it, durably: what is
 * due is read from the movements themselves (next_step_at), and each step locks its row and
 * re-checks that it is still due in the step's own transaction, so a step is done exactly once
 * however many schedulers run, and a process killed mid-step leaves the movement due for the next one.
 */
export class MoneyScheduler {
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private stopped = true

  constructor(
    private readonly db: Db,
    private readonly transact: Transact,
    private readonly context: DrainContext,
    private readonly log: SchedulerLog,
    private readonly options: MoneySchedulerOptions,
  ) {}

  start(): void {
    this.stopped = false
    this.schedule(0)
  }

  /** Stops looking; resolves once the steps under way have committed or rolled back. */
  async stop(): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    await this.running
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return
    this.timer = setTimeout(() => {
      this.running = this.scan().then((more) => {
        this.running = undefined
        this.schedule(more ? 0 : this.options.pollIntervalMs)
      })
    }, delayMs)
    this.timer.unref()
  }

  /** Advances what is due now; true when there may be more due at once. */
  private async scan(): Promise<boolean> {
    const nowIso = isoOf(this.context.now())
    const due: { movement: Movement; id: string }[] = []
    let full = false
    for (const movement of MOVEMENTS) {
      try {
        const ids = await movement.due(this.db, nowIso, BATCH)
        if (ids.length === BATCH) full = true
        for (const id of ids) due.push({ movement, id })
      } catch (error) {
        this.log.error({ err: error }, `money scheduler: could not read the due ${movement.name}s; retrying`)
      }
    }
    let next = 0
    let advanced = 0
    const worker = async (): Promise<void> => {
      while (!this.stopped && next < due.length) {
        const { movement, id } = due[next++] as { movement: Movement; id: string }
        try {
          if (await this.transact((tx) => movement.advance(tx, this.context, id))) advanced++
        } catch (error) {
          // The step rolled back: the movement stays due and is tried again at the next scan.
          this.log.error({ err: error, [`${movement.name}Id`]: id }, `money scheduler: a ${movement.name} step failed; it will be retried`)
        }
      }
    }
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency, due.length) }, worker))
    return full && advanced > 0
  }
}
