import type { Module } from '../modules/module.js'
import { appsTables } from './tables.js'

/** Applications and their keys. */
export const appsModule: Module = { tables: appsTables }
