export function port() {
  const value = process.env.PORT.trim()
  return Number(value)
}
