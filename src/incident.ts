/**
 * A fault that repeats while it lasts (a database outage, a full disk), logged once per incident
 * rather than once per failure: when it starts, again at most once per `everyMs` while it lasts
 * (with how many failures went unlogged), and once when it ends.
 */
export class Incident {
  private sinceMs: number | undefined
  private lastLoggedMs = 0
  private failures = 0
  private unlogged = 0

  constructor(
    private readonly everyMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts a failure. Returns what to log now, or undefined while this incident was logged recently. */
  failed(): { failures: number; unlogged: number } | undefined {
    const nowMs = this.now()
    this.failures++
    const ongoing = this.sinceMs !== undefined
    this.sinceMs ??= nowMs
    if (ongoing && nowMs - this.lastLoggedMs < this.everyMs) {
      this.unlogged++
      return undefined
    }
    const report = { failures: this.failures, unlogged: this.unlogged }
    this.lastLoggedMs = nowMs
    this.unlogged = 0
    return report
  }

  /** Ends the incident, if one is under way: returns what to log then. */
  ended(): { failedForMs: number; failures: number } | undefined {
    if (this.sinceMs === undefined) return undefined
    const report = { failedForMs: this.now() - this.sinceMs, failures: this.failures }
    this.sinceMs = undefined
    this.failures = 0
    this.unlogged = 0
    return report
  }
}
