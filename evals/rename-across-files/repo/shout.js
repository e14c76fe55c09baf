import { getUserName } from './users.js'
export const shout = (user) => getUserName(user).toUpperCase()
