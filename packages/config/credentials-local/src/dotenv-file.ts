import { readFileSync } from 'node:fs'
import dotenv from 'dotenv'

/**
 * The workspace's `.env` as a map: `KEY=value` lines, `#` comments, optional quotes and `export ` prefix
 * (dotenv's own parser). Empty values count as unset.
 */
export function readDotenv(file: string): Map<string, string> {
  const parsed = dotenv.parse(readFileSync(file, 'utf8'))
  return new Map(Object.entries(parsed).filter(([, value]) => value !== ''))
}
