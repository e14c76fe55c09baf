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
export function fencePoint(
  path: string,
  writableRoots: readonly string[],
  ours: ReadonlySet<string>,
): string | undefined {
  const root = writableRoots.find((candidate) => within(path, candidate) && path !== candidate)
  if (!root) return undefined
  let at = path
  while (dirname(at) !== root && !existsSync(dirname(at))) at = dirname(at)
  if (!isDirectory(dirname(at))) return undefined // a file on the way: nothing can be created beneath it
  if (existsSync(at) && !(ours.has(at) && isEmptyDirectory(at))) return undefined
  return at
}

/**
 * Perl (one process: it starts in milliseconds and has flock and rmdir built in) outside the sandbox. It loads
 * no module (Fcntl alone tripled perl's start, 1.4 → 4.1 ms; docs/performance.md): Linux's flock and errno
 * numbers are written out (bubblewrap is Linux only). For each
 * writable root with fences it takes a shared lock on that root's lock file and appends the mount points to
 * it (the file is also the list of what is left to remove), runs bubblewrap's argv as its child, then, for
 * each lock it can turn exclusive (no other confined command runs in that root), removes every empty folder
 * the file lists and empties it. So a command ending while another runs leaves its folders to whichever
 * command of that root ends last, also after a SIGKILL. A signal to the group ends bubblewrap (its default
 * action); this process waits, tidies, and ends the same way. bwrap dies with this process
 * (`--die-with-parent`), so a fence never outlives the lock that guards it; and this process kills bwrap once
 * its own parent (dsh) is gone, so a dsh killed with SIGKILL leaves no command running (checked every second).
 */
/**
 * The end of both fence launchers (this wrapper and launcher.ts): under the exclusive lock of each fence group no
 * other command of that root still runs, so its mount points are removed (deepest first, empty folders only);
 * then the command's signal, if it died of one, is raised again on this process.
 */
export const RELEASE_FENCES = `for my $fh (@held) {
  next unless flock($fh, $LOCK_EX | $LOCK_NB);
  seek($fh, 0, 0);
  my %listed = map { chomp; ($_ => 1) } <$fh>;
  rmdir $_ for sort { length($b) <=> length($a) } keys %listed;
  truncate($fh, 0);
}
if ($status & 127) { $SIG{$_} = 'DEFAULT' for qw(TERM INT HUP); kill($status & 127, $$); exit(128 + ($status & 127)) }
`

const TIDY = `my ($LOCK_SH, $LOCK_EX, $LOCK_NB, $EINTR) = (1, 2, 4, 4);
my ($wait, $groups) = splice(@ARGV, 0, 2);
sub refuse { print STDERR "dsh: the command was not run: the sandbox fence lock $_[0] cannot be taken\n"; exit 126 }
$SIG{$_} = sub {} for qw(TERM INT HUP);
my $parent = getppid();
my @held;
for (1 .. $groups) {
  my ($lock, $n) = splice(@ARGV, 0, 2);
  my @points = splice(@ARGV, 0, $n);
  open(my $fh, '+>>', $lock) or refuse($lock);
  my $deadline = time + $wait;
  until (flock($fh, $LOCK_SH | $LOCK_NB)) {
    refuse($lock) if time >= $deadline;
    select(undef, undef, undef, 0.01);
  }
  syswrite($fh, join('', map { "$_\n" } @points));
  push @held, $fh;
}
my $pid = fork;
defined $pid or do { print STDERR "dsh: the command was not run: fork failed: $!\n"; exit 126 };
if (!$pid) { exec { $ARGV[0] } @ARGV; print STDERR "dsh: cannot run $ARGV[0]: $!\n"; exit 127 }
# bwrap dies with its parent (--die-with-parent), and its parent is this process now: so end it once dsh,
# our parent, is gone (killed with SIGKILL: no signal reaches us), checked every second; then tidy as usual.
$SIG{ALRM} = sub { if (getppid() != $parent) { kill 'KILL', $pid } else { alarm 1 } };
alarm 1;
my $r;
do { $r = waitpid($pid, 0) } while ($r == -1 && $! == $EINTR);
alarm 0;
my $status = $?;
${RELEASE_FENCES}exit($status >> 8);
`

/**
 * Runs bubblewrap's argv so that the mount points it makes are removed once no confined command runs in their
 * writable root any more: `groups` pairs each root's lock file with the mount points under that root. Removing
 * a mount point from outside detaches that mount in every namespace holding it (measured, Linux 6.18), which
 * would open the fence of a command still running, so it happens only under the exclusive lock; a process
 * killed with SIGKILL releases its locks with its descriptors. Only empty folders are removed (`rmdir`):
 * nothing a person put there since. A lock that cannot be opened or taken in `waitSeconds` refuses the command
 * (exit 126; fail closed: no command runs whose fences another could remove).
 */
export function tidiedArgv(
  options: { perl: string; waitSeconds: number; groups: readonly { lock: string; points: readonly string[] }[] },
  argv: readonly string[],
): string[] {
  const groups = options.groups.flatMap(({ lock, points }) => [lock, String(points.length), ...points])
  return [options.perl, '-e', TIDY, String(options.waitSeconds), String(options.groups.length), ...groups, ...argv]
}
