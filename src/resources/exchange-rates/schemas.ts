import { Type, type Static } from 'typebox'
import { Timestamp } from '../../schemas/common.js'

/** The codes the API quotes: usd stands for USDC, eur for EURC. */
export const API_RATE_CURRENCIES = ['usd', 'eur'] as const
export type ApiRateCurrency = (typeof API_RATE_CURRENCIES)[number]

const Rate = (description: string, example: string) => Type.String({ description, examples: [example] })

/** The published client's ExchangeRateResponseDto. */
export const ExchangeRateSchema = Type.Object(
  {
    from: Type.String({ description: 'the currency converted from: usd (USDC) or eur (EURC)', examples: ['usd'] }),
    to: Type.String({ description: 'the currency converted to: usd (USDC) or eur (EURC)', examples: ['eur'] }),
    midmarket_rate: Rate('units of `to` per unit of `from` at the middle of the market, a decimal string', '0.85000'),
    buy_rate: Rate('what one unit of `from` gets in `to` (below midmarket_rate): the rate a conversion uses', '0.84500'),
    sell_rate: Rate('what one unit of `from` costs in `to` (above midmarket_rate)', '0.85500'),
    timestamp: { ...Timestamp, description: 'when the rate was true' },
  },
  { $id: 'ExchangeRate' },
)
export type ExchangeRateBody = Static<typeof ExchangeRateSchema>

const Code = (side: 'from' | 'to') =>
  Type.Enum([...API_RATE_CURRENCIES], { description: `the currency converted ${side}: usd (USDC) or eur (EURC)`, 'x-message': `${side} must be usd (USDC) or eur (EURC)` })

export const ExchangeRateQuery = Type.Object({ from: { ...Code('from'), examples: ['usd'] }, to: { ...Code('to'), examples: ['eur'] } })
export type ExchangeRateQuery = Static<typeof ExchangeRateQuery>
