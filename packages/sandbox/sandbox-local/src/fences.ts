import { existsSync, readdirSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import { within } from '@dsh/sandbox-rules'

// Missing protected paths (docs/security.md, "Protected names that do not exist yet"): a name such as
// `.husky` or `.mcp.json` that is not there yet is fenced by mounting an empty read-only folder on it, so no
// confined command can create it. bubblewrap must make that mount point on the disk first, in the user's
// workspace; `tidiedArgv` removes it again once the command has ended.

const isDirectory = (path: string) => {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

const isEmptyDirectory = (path: string) => {
  try {
    return statSync(path).isDirectory() && readdirSync(path).length === 0
  } catch {
    return false
  }
}

/**
 * Where a fence for the missing `path` is mounted: its first missing ancestor below a writable root (so
 * `.config/git` with no `.config` fences `.config`: bwrap would otherwise make every folder on the way), or
 * undefined when `path` lies in no writable root (the rest of the disk is read-only already) or is a root.
 * `ours` are mount points an earlier command of this process left (killed before it could remove them): an
 * empty folder among them counts as missing, so it is fenced and removed again.
 */
export function fencePoint(path: string, writableRoots: readonly string[], ours: ReadonlySet<string>): string | undefined {
  const root = writableRoots.find((candidate) => within(path, candidate) && path !== candidate)
  if (!root) return undefined
  let at = path
  while (dirname(at) !== root && !existsSync(dirname(at))) at = dirname(at)
  if (!isDirectory(dirname(at))) return undefined // a file on the way: nothing can be created beneath it
  if (existsSync(at) && !(ours.has(at) && isEmptyDirectory(at))) return undefined
  return at
}

/**
 * Perl (one process: it starts in milliseconds and has flock and rmdir built in) outside the sandbox: takes
 * a shared lock on the lock file for the command's life, runs bubblewrap's argv as its child, then removes
 * the empty mount points only under the exclusive lock. A signal to the group ends bubblewrap (its default
 * action); this process waits, tidies, and ends the same way. bwrap dies with this process
 * (`--die-with-parent`), so a fence never outlives the lock that guards it.
 */
const TIDY = `use Fcntl qw(:flock);
my ($lock, $wait, $n) = splice(@ARGV, 0, 3);
my @fences = splice(@ARGV, 0, $n);
$SIG{$_} = sub {} for qw(TERM INT HUP);
my $fh;
my $locked = open($fh, '>>', $lock);
if ($locked) {
  my $deadline = time + $wait;
  until (flock($fh, LOCK_SH | LOCK_NB)) {
    if (time >= $deadline) { $locked = 0; last }
    select(undef, undef, undef, 0.01);
  }
}
unless ($locked) { print STDERR "dsh: the command was not run: the sandbox fence lock $lock cannot be taken\n"; exit 126 }
my $pid = fork;
defined $pid or do { print STDERR "dsh: the command was not run: fork failed: $!\n"; exit 126 };
if (!$pid) { exec { $ARGV[0] } @ARGV; print STDERR "dsh: cannot run $ARGV[0]: $!\n"; exit 127 }
my $r;
do { $r = waitpid($pid, 0) } while ($r == -1 && $!{EINTR});
my $status = $?;
rmdir $_ for (flock($fh, LOCK_EX | LOCK_NB) ? @fences : ());
if ($status & 127) { $SIG{$_} = 'DEFAULT' for qw(TERM INT HUP); kill($status & 127, $$); exit(128 + ($status & 127)) }
exit($status >> 8);
`

/**
 * Runs bubblewrap's argv so that the mount points `fences` are removed once it has ended, unless another
 * confined command still runs: each holds a shared lock on `lock` for its whole life, and the folders are
 * removed only under the exclusive lock. Removing a mount point from outside detaches that mount in every
 * namespace holding it (measured, Linux 6.18), which would open the fence of a command still running; a
 * process killed with SIGKILL releases its lock with its descriptors. Only empty folders are removed
 * (`rmdir`): nothing a person put there since. A lock that cannot be opened or taken in `waitSeconds`
 * refuses the command (exit 126; fail closed: no command runs whose fences another could remove).
 */
export function tidiedArgv(options: { perl: string; lock: string; waitSeconds: number; fences: readonly string[] }, argv: readonly string[]): string[] {
  return [options.perl, '-e', TIDY, options.lock, String(options.waitSeconds), String(options.fences.length), ...options.fences, ...argv]
}
