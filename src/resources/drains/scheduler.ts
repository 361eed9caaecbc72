import type { Db } from '../../db/database.js'
import { isoOf } from '../../db/time.js'
import type { Transact } from '../../db/transact.js'
import { advanceDrain, type DrainContext } from './lifecycle.js'
import { DrainsRepository } from './repository.js'

export interface DrainSchedulerOptions {
  /** how often it looks for due drains when it found none */
  pollIntervalMs: number
  /** drains advanced at once (each in its own transaction) */
  concurrency: number
}

interface SchedulerLog {
  error(details: object, message: string): void
}

/** Drains looked at per scan. */
const BATCH = 64

/**
 * Advances due drains, in every server and worker that runs it, durably: what is due is read
 * from the drains themselves (next_step_at), and each step locks its drain and re-checks that
 * it is still due in the step's own transaction, so a step is done exactly once however many
 * schedulers run, and a process killed mid-step leaves the drain due for the next one.
 */
export class DrainScheduler {
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private stopped = true

  constructor(
    private readonly db: Db,
    private readonly transact: Transact,
    private readonly context: DrainContext,
    private readonly log: SchedulerLog,
    private readonly options: DrainSchedulerOptions,
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
    let ids: string[]
    try {
      ids = await new DrainsRepository(this.db).due(isoOf(this.context.now()), BATCH)
    } catch (error) {
      this.log.error({ err: error }, 'drain scheduler: could not read the due drains; retrying')
      return false
    }
    let next = 0
    let advanced = 0
    const worker = async (): Promise<void> => {
      while (!this.stopped && next < ids.length) {
        const id = ids[next++] as string
        try {
          if (await this.transact((tx) => advanceDrain(tx, this.context, id))) advanced++
        } catch (error) {
          // The step rolled back: the drain stays due and is tried again at the next scan.
          this.log.error({ err: error, drainId: id }, 'drain scheduler: a step failed; it will be retried')
        }
      }
    }
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency, ids.length) }, worker))
    return ids.length === BATCH && advanced > 0
  }
}
