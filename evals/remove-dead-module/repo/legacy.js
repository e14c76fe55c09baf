export function legacyBanner() {
  return 'legacy mode'
}
