import { expect, test } from 'vitest'
import { exactly, HOST_PATTERN, isPublicAddress, matches, normalizeHost } from './rules.ts'

test('patterns: * names every host, *.x every subdomain but not x itself, anything else one host', () => {
  expect(matches('*', 'anything.example')).toBe(true)
  expect(matches('*.example.org', 'a.b.example.org')).toBe(true)
  expect(matches('*.example.org', 'example.org')).toBe(false)
  expect(matches('*.example.org', 'evilexample.org')).toBe(false)
  expect(matches('API.example.com', normalizeHost('api.EXAMPLE.com.'))).toBe(true)
  expect(matches('::1', normalizeHost('[0:0:0:0:0:0:0:1]'))).toBe(true)
  expect(exactly('*', 'localhost')).toBe(false)
  expect(exactly('localhost', 'localhost')).toBe(true)
})

test('loopback, private, link-local, unique-local, mapped and unspecified addresses are not public', () => {
  for (const address of [
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fc00::1',
    'fe80::1',
    '::ffff:127.0.0.1',
    'not-an-address',
  ]) {
    expect(isPublicAddress(address), address).toBe(false)
  }
  for (const address of ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'])
    expect(isPublicAddress(address), address).toBe(true)
})

test("the setting's pattern accepts hosts, addresses and wildcards, and refuses URLs and globs in the middle", () => {
  for (const pattern of ['*', '*.example.org', 'api.example.com', '127.0.0.1', '::1', '[::1]', 'localhost'])
    expect(HOST_PATTERN.test(pattern), pattern).toBe(true)
  for (const pattern of ['https://example.com', 'api.*.com', 'example.com/path', '', 'a b'])
    expect(HOST_PATTERN.test(pattern), pattern).toBe(false)
})
