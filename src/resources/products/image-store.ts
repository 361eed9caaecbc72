import { mkdir, open, rm, type FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import type { Readable } from 'node:stream'

/** An image being written: its bytes arrive in order; nothing is readable until `finish`. */
export interface ImageWriter {
  write(bytes: Buffer): Promise<void>
  /** The bytes are durable once this resolves. */
  finish(): Promise<void>
  /** Stops writing and removes what was written. */
  abort(): Promise<void>
}

/**
 * Where product images' bytes live, each under its image id (a random UUID). The database holds
 * which images a product has; the store only holds bytes, so a store can be a directory (the
 * default), a mounted volume or an object store.
 */
export interface ImageStore {
  /** A new image under `key`, written as its bytes arrive (never held whole in memory). */
  create(key: string): Promise<ImageWriter>
  /** The image's bytes and size, or undefined when the store has no such image. */
  read(key: string): Promise<{ bytes: Readable; size: number } | undefined>
  /** Removes the images; a key the store does not have is skipped. */
  remove(keys: readonly string[]): Promise<void>
}

const KEY = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

function checkedKey(key: string): string {
  // The key becomes a file name: only the ids this code makes are accepted.
  if (!KEY.test(key)) throw new Error(`not an image key: ${JSON.stringify(key)}`)
  return key
}

function isMissing(error: unknown): boolean {
  return error instanceof Error && 'code' in error && error.code === 'ENOENT'
}

/**
 * Images as files under a directory (PRODUCT_IMAGES_DIR), spread over 256 subdirectories by the
 * key's first two hex digits so no one directory grows past what a file system lists quickly.
 * A file and its directory entry are synced before `finish` resolves, so a committed product
 * never names an image a crash lost.
 */
export class DirectoryImageStore implements ImageStore {
  private readonly madeDirectories = new Set<string>()

  constructor(private readonly root: string) {}

  private directoryOf(key: string): string {
    return join(this.root, checkedKey(key).slice(0, 2))
  }

  private pathOf(key: string): string {
    return join(this.directoryOf(key), key)
  }

  async create(key: string): Promise<ImageWriter> {
    const directory = this.directoryOf(key)
    const path = this.pathOf(key)
    if (!this.madeDirectories.has(directory)) await this.makeDirectory(directory)
    let file: FileHandle
    try {
      // 'wx': a key is written once; an existing file is never overwritten.
      file = await open(path, 'wx')
    } catch (error) {
      // The directory was removed from under the store since it was made: make it again.
      if (!isMissing(error)) throw error
      await this.makeDirectory(directory)
      file = await open(path, 'wx')
    }
    return new FileImageWriter(file, path, directory)
  }

  private async makeDirectory(directory: string): Promise<void> {
    await mkdir(directory, { recursive: true })
    this.madeDirectories.add(directory)
  }

  async read(key: string): Promise<{ bytes: Readable; size: number } | undefined> {
    let file: FileHandle
    try {
      file = await open(this.pathOf(key), 'r')
    } catch (error) {
      if (isMissing(error)) return undefined
      throw error
    }
    // Read through the open file: an image removed meanwhile is still read whole.
    try {
      const { size } = await file.stat()
      return { bytes: file.createReadStream(), size }
    } catch (error) {
      await file.close()
      throw error
    }
  }

  async remove(keys: readonly string[]): Promise<void> {
    await Promise.all(keys.map((key) => rm(this.pathOf(key), { force: true })))
  }
}

class FileImageWriter implements ImageWriter {
  private closed = false

  constructor(
    private readonly file: FileHandle,
    private readonly path: string,
    private readonly directory: string,
  ) {}

  async write(bytes: Buffer): Promise<void> {
    let written = 0
    while (written < bytes.length) {
      const { bytesWritten } = await this.file.write(bytes, written, bytes.length - written)
      written += bytesWritten
    }
  }

  async finish(): Promise<void> {
    await this.file.sync()
    await this.close()
    const directory = await open(this.directory, 'r')
    try {
      await directory.sync()
    } finally {
      await directory.close()
    }
  }

  async abort(): Promise<void> {
    await this.close()
    await rm(this.path, { force: true })
  }

  private async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.file.close()
  }
}
