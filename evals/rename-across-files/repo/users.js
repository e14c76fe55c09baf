export function getUserName(user) {
  return `${user.first} ${user.last}`
}
