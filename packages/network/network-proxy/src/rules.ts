import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

/**
 * A host pattern of `network.allow` / `network.deny`: `*` (every host), `*.example.org` (every subdomain,
 * not the apex), or one exact name or address (`api.example.com`, `127.0.0.1`, `::1`).
 */
export const HOST_PATTERN = /^(\*|(\*\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?|[0-9a-f:.]+|\[[0-9a-f:.]+\])$/i

/** Lower case, no brackets around an IPv6 address, no trailing dot; addresses in their normal form. */
export function normalizeHost(host: string): string {
  let name = host.trim().toLowerCase()
  if (name.startsWith('[') && name.endsWith(']')) name = name.slice(1, -1)
  if (name.endsWith('.')) name = name.slice(0, -1)
  return isIP(name) ? ipaddr.process(name).toString() : name
}

/** Whether `pattern` names `host` (both compared normalized). */
export function matches(pattern: string, host: string): boolean {
  const normalized = pattern === '*' || pattern.startsWith('*.') ? pattern.toLowerCase() : normalizeHost(pattern)
  if (normalized === '*') return true
  if (normalized.startsWith('*.')) return host.endsWith(normalized.slice(1))
  return normalized === host
}

/** An exact pattern (no wildcard) naming `host`: the only kind that admits a private or loopback address. */
export const exactly = (pattern: string, host: string) => !pattern.includes('*') && matches(pattern, host)

/**
 * Whether an address belongs to the public internet. Loopback, private, link-local, unique-local,
 * carrier-grade NAT, unspecified, multicast and reserved ranges are not: they reach the host itself or its
 * neighbours (dsh's own web host, databases, a cloud metadata service).
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false
  return ipaddr.process(address).range() === 'unicast'
}
