import jsqr from 'jsqr'

// jsqr is CommonJS whose types declare an ES default: under NodeNext its function is that default's `default`.
const jsQR = jsqr.default

/**
 * The text of the QR code a page shows, read back by a real decoder (jsQR) from the page's own
 * SVG: each `M{x} {y}h1v1h-1z` square of its path painted black on white at 8 pixels a module.
 */
export function decodedQr(page: string): string | undefined {
  const svg = /<svg class="qr"[^>]*viewBox="0 0 (\d+) \d+"[^>]*>.*?<path fill="#000" d="([^"]*)"/s.exec(page)
  if (svg === null) return undefined
  const modules = Number(svg[1])
  const scale = 8
  const width = modules * scale
  const pixels = new Uint8ClampedArray(width * width * 4).fill(255)
  for (const square of (svg[2] ?? '').matchAll(/M(\d+) (\d+)h1v1h-1z/g)) {
    const x = Number(square[1])
    const y = Number(square[2])
    for (let dy = 0; dy < scale; dy++) {
      for (let dx = 0; dx < scale; dx++) {
        const at = ((y * scale + dy) * width + x * scale + dx) * 4
        pixels[at] = 0
        pixels[at + 1] = 0
        pixels[at + 2] = 0
      }
    }
  }
  return jsQR(pixels, width, width)?.data
}
