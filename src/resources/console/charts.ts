import { type Html, html } from './html.js'

/**
 * Charts drawn on the server as SVG: no script, read by a screen reader from their title and the
 * table beside them. Values are bigint amounts; only the drawing's coordinates are numbers.
 */

const WIDTH = 640
const HEIGHT = 200
const PAD = { left: 8, right: 8, top: 12, bottom: 22 }
export const SERIES_COLORS = ['#1d4ed8', '#b45309', '#047857', '#7c3aed'] as const

export interface Series {
  name: string
  color: string
  /** one value per label, in the labels' order */
  values: readonly bigint[]
}

/** The y of `value` between `min` and `max` in the plot's height. */
function yOf(value: bigint, min: bigint, max: bigint): number {
  const span = max - min === 0n ? 1n : max - min
  const plot = HEIGHT - PAD.top - PAD.bottom
  return PAD.top + plot - Number(((value - min) * 10_000n) / span) * (plot / 10_000)
}

/** A line per series over the labels (days), with the first, middle and last label under the axis. */
export function lineChart(title: string, labels: readonly string[], series: readonly Series[]): Html {
  const all = series.flatMap((one) => one.values)
  const max = all.reduce((a, b) => (b > a ? b : a), 0n)
  const min = all.reduce((a, b) => (b < a ? b : a), 0n)
  const step = labels.length > 1 ? (WIDTH - PAD.left - PAD.right) / (labels.length - 1) : 0
  const xOf = (index: number) => (PAD.left + index * step).toFixed(1)
  const lines = series.map((one) => {
    const points = one.values.map((value, index) => `${xOf(index)},${yOf(value, min, max).toFixed(1)}`).join(' ')
    return html`<polyline fill="none" stroke="${one.color}" stroke-width="2.5" stroke-linejoin="round" points="${points}"/>`
  })
  const ticks = [0, Math.floor((labels.length - 1) / 2), labels.length - 1].filter((index, position, all) => index >= 0 && all.indexOf(index) === position)
  const tickLabels = ticks.map((index) => html`<text x="${xOf(index)}" y="${HEIGHT - 6}" text-anchor="${index === 0 ? 'start' : index === labels.length - 1 ? 'end' : 'middle'}">${labels[index] ?? ''}</text>`)
  const zero = yOf(0n, min, max).toFixed(1)
  return html`<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${title}"><title>${title}</title>
<line x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${zero}" y2="${zero}" stroke="#d0d7de"/>
${lines}${tickLabels}</svg>
<ul class="legend">${series.map((one) => html`<li><span class="swatch" style="background:${one.color}"></span>${one.name}</li>`)}</ul>`
}

/**
 * Stacked bars, one per label (days), the series stacked in their order from the axis up; each
 * bar's full height is the largest total. The first, middle and last label under the axis.
 */
export function barChart(title: string, labels: readonly string[], series: readonly Series[]): Html {
  const totals = labels.map((_, index) => series.reduce((total, one) => total + (one.values[index] ?? 0n), 0n))
  const max = totals.reduce((a, b) => (b > a ? b : a), 0n)
  const slot = (WIDTH - PAD.left - PAD.right) / Math.max(labels.length, 1)
  const width = Math.max(slot * 0.7, 1).toFixed(1)
  const xOf = (index: number) => PAD.left + index * slot
  const bars = labels.map((_, index) => {
    let base = 0n
    return series.map((one) => {
      const value = one.values[index] ?? 0n
      const top = yOf(base + value, 0n, max)
      const bottom = yOf(base, 0n, max)
      base += value
      return value === 0n ? html`` : html`<rect x="${(xOf(index) + slot * 0.15).toFixed(1)}" y="${top.toFixed(1)}" width="${width}" height="${(bottom - top).toFixed(1)}" fill="${one.color}"/>`
    })
  })
  const ticks = [0, Math.floor((labels.length - 1) / 2), labels.length - 1].filter((index, position, all) => index >= 0 && all.indexOf(index) === position)
  const tickLabels = ticks.map((index) => html`<text x="${(xOf(index) + slot / 2).toFixed(1)}" y="${HEIGHT - 6}" text-anchor="${index === 0 ? 'start' : index === labels.length - 1 ? 'end' : 'middle'}">${labels[index] ?? ''}</text>`)
  const axis = yOf(0n, 0n, max).toFixed(1)
  return html`<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${title}"><title>${title}</title>
<line x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${axis}" y2="${axis}" stroke="#d0d7de"/>
${bars}${tickLabels}</svg>
<ul class="legend">${series.map((one) => html`<li><span class="swatch" style="background:${one.color}"></span>${one.name}</li>`)}</ul>`
}
