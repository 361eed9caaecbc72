import type { FastifyBaseLogger } from 'fastify'
import type { Bindings, ChildLoggerOptions } from 'pino'

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'

/** What the parent logger must tell: whether a level is written (pino's loggers can). */
interface LevelAware {
  isLevelEnabled(level: string): boolean
}

function isLevelAware(logger: FastifyBaseLogger): logger is FastifyBaseLogger & LevelAware {
  return typeof (logger as Partial<LevelAware>).isLevelEnabled === 'function'
}

/**
 * A request's logger (request.log) that makes its pino child, with the request id bound, only when
 * something is written at a level the parent writes. Fastify makes every request a child logger,
 * whatever the level, and pino's child copies and serialises the bindings each time: at
 * LOG_LEVEL=warn a request writes nothing, so that work was all waste. Every line written is the
 * child's own.
 */
class RequestLogger implements FastifyBaseLogger {
  private made: FastifyBaseLogger | undefined

  constructor(
    private readonly parent: FastifyBaseLogger & LevelAware,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  get level(): string {
    return this.made?.level ?? this.parent.level
  }

  set level(level: string) {
    this.logger().level = level
  }

  fatal(...args: unknown[]): void {
    this.write('fatal', args)
  }

  error(...args: unknown[]): void {
    this.write('error', args)
  }

  warn(...args: unknown[]): void {
    this.write('warn', args)
  }

  info(...args: unknown[]): void {
    this.write('info', args)
  }

  debug(...args: unknown[]): void {
    this.write('debug', args)
  }

  trace(...args: unknown[]): void {
    this.write('trace', args)
  }

  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger().child(bindings, options)
  }

  private write(level: Level, args: unknown[]): void {
    if (this.made === undefined && !this.parent.isLevelEnabled(level)) return
    const logger = this.logger()
    Reflect.apply(logger[level], logger, args)
  }

  private logger(): FastifyBaseLogger {
    this.made ??= this.parent.child(this.bindings, this.options)
    return this.made
  }
}

/**
 * Fastify's childLoggerFactory: a RequestLogger, or pino's child at once where the route sets a
 * level or serializers of its own (the child is then not the parent's twin) or the parent can't
 * tell its levels.
 */
export function requestLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  if (options.level !== undefined || options.serializers !== undefined || !isLevelAware(logger)) return logger.child(bindings, options)
  return new RequestLogger(logger, bindings, options)
}
