import type { Refusal } from './decide.ts'

/**
 * What a refused command reads (the body of the proxy's 403): the host, and what would let it through,
 * naming the settings file, so `curl` through the proxy prints a reason a person can act on.
 */
export function refusalMessage(host: string, why: Refusal, settingsFile: string): string {
  switch (why.kind) {
    case 'denied':
      return `dsh: network not allowed: ${host} (refused by network.deny "${why.pattern}" in ${settingsFile})`
    case 'private':
      return `dsh: network not allowed: ${host} resolves to the private address ${why.address}, which the wildcard "${why.pattern}" does not admit (add the exact name ${host} to network.allow in ${settingsFile})`
    case 'private-unlisted':
      return `dsh: network not allowed: ${host} resolves to the private address ${why.address}, which only an exact network.allow entry admits (no approval can; add ${host} to network.allow in ${settingsFile})`
    case 'rejected':
      return `dsh: network not allowed: ${host} (the approval was refused; add it to network.allow in ${settingsFile})`
    case 'lookup':
      return `dsh: network not allowed: ${host} cannot be resolved (${why.detail})`
    case 'not-allowed':
      return `dsh: network not allowed: ${host} (add it to network.allow in ${settingsFile})`
  }
}
