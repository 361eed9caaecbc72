import type { Attempt } from './in-flight.js'

/** Where a claimed attempt's request is, as its claim's commit sees it. */
type Phase = 'connecting' | 'looking up' | 'written'

/**
 * PostgreSQL: a claim's requests, as its commit waits for them. A DELETE served by another
 * process waits for the claim's commit (the webhook's row lock) and then aborts the claim's
 * requests through NOTIFY, a few milliseconds later: a request written in that gap would reach
 * its receiver after the DELETE had answered. So the claim commits only once each of its requests
 * is written (or ended), or is still looking its host up, waiting at most a given time. Then the
 * claim is sealed: a request whose host resolves after that is not covered by the claim and takes
 * a guard of its own before connecting (Dispatcher.guardConnection). Waiting for lookups too held
 * every claim with an unresolvable host for the whole wait, and with it the claims behind it.
 */
export class ClaimWrites {
  private readonly phases = new Map<Attempt, Phase>()
  private connecting = 0
  private sealed = false
  private wake: (() => void) | undefined

  /** A request of the claim, started: connecting (or writing on a reused connection) until told otherwise. */
  add(attempt: Attempt): void {
    this.phases.set(attempt, 'connecting')
    this.connecting++
    void attempt.written.then(() => this.move(attempt, 'written'))
  }

  /** Its host is being looked up. */
  lookingUp(attempt: Attempt): void {
    if (this.phases.get(attempt) === 'connecting') this.move(attempt, 'looking up')
  }

  /** Its host has resolved: true when the claim still covers its connection, false once sealed. */
  resolved(attempt: Attempt): boolean {
    if (this.sealed) return false
    this.move(attempt, 'connecting')
    return true
  }

  /**
   * Waits until no request is connecting, or `waitMs` has passed, then seals the claim.
   * Answers how many requests were still connecting (the claim commits without them).
   */
  async settle(waitMs: number): Promise<number> {
    let timer: NodeJS.Timeout | undefined
    let expired = false
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        expired = true
        resolve()
      }, waitMs)
    })
    try {
      while (this.connecting > 0 && !expired) await Promise.race([new Promise<void>((resolve) => (this.wake = resolve)), deadline])
      return this.connecting
    } finally {
      clearTimeout(timer)
      this.sealed = true
      this.wake = undefined
    }
  }

  private move(attempt: Attempt, phase: Phase): void {
    const was = this.phases.get(attempt)
    if (was === phase) return
    if (was === 'connecting') this.connecting--
    if (phase === 'connecting') this.connecting++
    this.phases.set(attempt, phase)
    this.wake?.()
  }
}
