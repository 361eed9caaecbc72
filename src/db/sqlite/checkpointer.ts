import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'

/**
 * The worker's code: one PASSIVE checkpoint per request, on a connection of its own opened for it
 * and closed after it, so nothing of the worker stays open when the database closes. Plain
 * JavaScript, run with `eval`: the same source works under the build and under the tests' loader.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.driver)
parentPort.on('message', ({ id, filename }) => {
  let db
  try {
    db = new Database(filename, { fileMustExist: true, timeout: 0 })
    const [row] = db.pragma('wal_checkpoint(PASSIVE)')
    parentPort.postMessage({ id, log: row.log, checkpointed: row.checkpointed })
  } catch (error) {
    parentPort.postMessage({ id, error: String(error && error.message ? error.message : error) })
  } finally {
    try { if (db) db.close() } catch {}
  }
})
`

interface CheckpointResult {
  /** frames in the WAL when it ran */
  log: number
  /** of those, copied into the database file */
  checkpointed: number
}

type Reply = ({ id: number } & CheckpointResult) | { id: number; error: string }

/** One worker thread per process, for every SQLite database it opens; it never keeps the process alive. */
class CheckpointWorker {
  private worker: Worker | undefined
  private nextId = 0
  private readonly waiting = new Map<number, { resolve: (result: CheckpointResult) => void; reject: (error: Error) => void }>()

  checkpoint(filename: string): Promise<CheckpointResult> {
    const worker = this.started()
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject })
      worker.postMessage({ id, filename })
    })
  }

  private started(): Worker {
    if (this.worker !== undefined) return this.worker
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver: createRequire(import.meta.url).resolve('better-sqlite3') } })
    worker.on('message', (reply: Reply) => {
      const waiter = this.waiting.get(reply.id)
      this.waiting.delete(reply.id)
      if ('error' in reply) waiter?.reject(new Error(reply.error))
      else waiter?.resolve({ log: reply.log, checkpointed: reply.checkpointed })
    })
    worker.on('error', (error) => this.failAll(error))
    worker.on('exit', () => {
      this.worker = undefined
      this.failAll(new Error('the checkpoint worker exited'))
    })
    // After the listeners: unrefed before them, the worker kept `devplatform worker` from exiting
    // after SIGTERM (test/server/delivery-processes.test.ts).
    worker.unref()
    this.worker = worker
    return worker
  }

  private failAll(error: Error): void {
    for (const waiter of this.waiting.values()) waiter.reject(error)
    this.waiting.clear()
  }
}

const sharedWorker = new CheckpointWorker()

/** The least time between the starts of two checkpoints of one database while it is written. */
export const CHECKPOINT_INTERVAL_MS = 50
/**
 * WAL frames (pages) past which writes let a checkpoint catch up before the next group begins:
 * SQLite restarts the WAL from its start only when a write finds every frame checkpointed, which
 * under a steady stream of commits may never happen by itself. 4,096 frames: 16 MB of 4 KB pages.
 */
export const WAL_LIMIT_FRAMES = 4_096

/**
 * SQLite's checkpoints (copying committed pages from the WAL into the database file, then syncing
 * it), run on a worker thread instead of inside a COMMIT on the event loop. With the default
 * auto-checkpoint, every 1,000 pages one COMMIT also copied 4 MB and synced the database file
 * while every request waited (bench:webhooks: commits averaged 2.4 ms with it, 1.4 ms without).
 * The connection runs with `wal_autocheckpoint = 0`; this asks the worker for a PASSIVE
 * checkpoint (it never waits for readers or writers) at most every CHECKPOINT_INTERVAL_MS while
 * commits come, and holds the next write group back, asynchronously, while the WAL is past
 * WAL_LIMIT_FRAMES, until a checkpoint has caught up with it.
 *
 * A checkpoint that fails (a full disk) changes nothing: the pages stay in the WAL, durable, and
 * the next commit asks again.
 */
export class WalCheckpointer {
  private running: Promise<void> | undefined
  private lastStartedMs = Number.NEGATIVE_INFINITY
  /** commits made so far (committed() calls), and how many of them the WAL's last full copy covered */
  private commits = 0
  private copiedThrough = 0
  /** frames in the WAL at the last checkpoint */
  private walFrames = 0

  constructor(
    private readonly filename: string,
    private readonly worker: Pick<CheckpointWorker, 'checkpoint'> = sharedWorker,
    private readonly nowMs: () => number = Date.now,
  ) {}

  /** After a commit: checkpoints soon, unless one runs or one started within the interval. */
  committed(): void {
    this.commits++
    if (this.running !== undefined || this.nowMs() - this.lastStartedMs < CHECKPOINT_INTERVAL_MS) return
    void this.run()
  }

  /**
   * Before a write group begins: while the WAL is past its limit, waits for a checkpoint that
   * began after the last commit (no commit of this process comes meanwhile: groups run one at a
   * time), so it copies every frame and the group's first write restarts the WAL. Two tries at
   * most: another process's long read can keep frames from being copied, and writes go on then.
   */
  async beforeWrite(): Promise<void> {
    for (let tries = 0; tries < 2 && this.walFrames >= WAL_LIMIT_FRAMES && this.copiedThrough < this.commits; tries++) {
      await (this.running ?? this.run())
    }
  }

  /** Settles once no checkpoint of this database runs. */
  async idle(): Promise<void> {
    while (this.running !== undefined) await this.running
  }

  private run(): Promise<void> {
    this.lastStartedMs = this.nowMs()
    const commits = this.commits
    const running = this.worker.checkpoint(this.filename).then(
      (result) => {
        this.walFrames = result.log
        if (result.checkpointed >= result.log) this.copiedThrough = commits
      },
      // Nothing was lost: the frames stay in the WAL until a later checkpoint copies them.
      () => undefined,
    )
    const tracked: Promise<void> = running.finally(() => {
      if (this.running === tracked) this.running = undefined
    })
    this.running = tracked
    return tracked
  }
}
