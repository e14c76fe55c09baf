/**
 * The first thing a confined command's shell does inside bubblewrap: close every descriptor above stdio.
 * A descriptor dsh itself was started with (a terminal's or an IDE's pipe, a socket to a host service) is
 * inherited by every child without close-on-exec, and it leads out of every namespace: a confined command
 * writing to it writes on the host. bubblewrap passes such descriptors through, so they are closed here,
 * before the network bridge or the command starts: `exec N>&-` for every entry of the shell's own fd table
 * (the directory descriptor the glob opened is gone by then, and bash closes an unopened descriptor
 * silently). No redirection on the loop: bash would park stderr on a high descriptor the loop then closes.
 */
export const CLOSE_INHERITED =
  'for fd in /proc/self/fd/*; do fd=${fd##*/}; if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi; done'

/** The argv (run inside the sandbox) that closes inherited descriptors and then becomes `argv`. */
export function closedArgv(bash: string, argv: string[]): string[] {
  return [bash, '-c', `${CLOSE_INHERITED}\nexec "$@"`, 'dsh-confined', ...argv]
}
