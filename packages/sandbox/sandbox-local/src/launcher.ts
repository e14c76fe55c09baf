import { RELEASE_FENCES } from './fences.ts'

// The one launcher of a confined command outside bubblewrap (docs/performance.md, "Where a step goes"): a single
// perl process does, before bwrap starts and after it ends, what a chain of a fence wrapper (perl), a cgroup
// joiner (/bin/sh) and, inside the sandbox, a limits launcher (bash) did. Of a confined `echo`, that chain was
// three process starts and a fork around bwrap; now it is one perl start and a fork.

/**
 * Linux's `prlimit64` system call by Node's `process.arch` (x86_64's table and the generic one arm64 uses).
 * Perl has no setrlimit of its own; on another architecture the bash launcher inside the sandbox
 * (limits.ts) sets the rlimits with `ulimit` instead.
 */
export const PRLIMIT64: Partial<Record<NodeJS.Architecture, number>> = { x64: 302, arm64: 261 }

/** Linux's rlimit resource numbers (the same on every architecture with a generic resource table). */
export const RLIMIT = { cpu: 0, fileSize: 1, addressSpace: 9 } as const

export interface LaunchPlan {
  perl: string
  /** How long to wait for a fence lock before the command is refused (seconds). */
  waitSeconds: number
  /** Each writable root with fences: its lock file and the mount points bwrap makes under it (fences.ts). */
  groups: readonly { lock: string; points: readonly string[] }[]
  /** `prlimit64`'s number on this machine; needed when `rlimits` is not empty. */
  prlimit?: number
  /** Set on the process that becomes bwrap, so bwrap and everything inside inherit them. */
  rlimits: readonly { resource: number; soft: number; hard: number }[]
  /** The `cgroup.procs` files of the command's cgroups (limits.ts): that process joins them first. */
  procs: readonly string[]
  /** The cgroups' event counters (pids: `max N`, memory: `oom_kill N`), read before and after the command. */
  events: { pids?: string; memory?: string }
  /** How each limit is named to the model when the command meets it, with its value. */
  labels: { fileSize: string; cpuSeconds: string; processes: string; memory: string }
}

/**
 * Perl (it starts in milliseconds and has flock, rmdir and syscall built in; no module loaded: `Fcntl` alone
 * tripled its start, 1.4 → 4.1 ms) outside the sandbox, in order:
 * 1. closes every descriptor above stdio (src/descriptors.ts: a descriptor dsh was started with leads out of
 *    every namespace, and bubblewrap passes them through); perl marks the ones it opens close-on-exec, so bwrap
 *    starts with stdio alone;
 * 2. for each writable root with fences (fences.ts), takes a shared lock on that root's lock file and appends the
 *    mount points to it (the file is also the list of what is left to remove); a lock it cannot take in time
 *    refuses the command (exit 126: no command runs whose fences another could remove);
 * 3. reads the cgroups' event counters, forks; the child joins the command's cgroups (its pid into each
 *    `cgroup.procs`), sets the rlimits (`prlimit64`) and execs bwrap; this process stays outside the cgroups,
 *    so a command its memory limit kills cannot take the removal of its mount points with it; a cgroup it
 *    cannot join or a limit it cannot set ends the command before it runs (exit 125);
 * 4. waits (a signal to the group ends bwrap by its default action; this process ignores it, waits, and ends
 *    the same way), and kills bwrap once its own parent (dsh) is gone, checked every second, so a dsh killed
 *    with SIGKILL leaves no command running (bwrap dies with this process: `--die-with-parent`);
 * 5. names the limit the command met on stderr (exit 153 SIGXFSZ, 152 SIGXCPU, a pids counter that moved: a
 *    fork refused, a memory counter that moved: a process killed), so the model reads which one and its
 *    setting;
 * 6. for each lock it can turn exclusive (no other confined command runs in that root), removes every empty
 *    folder the file lists and empties it; a command ending while another runs leaves its folders to whichever
 *    command of that root ends last, also after a SIGKILL. Removing a mount point from outside detaches that
 *    mount in every namespace holding it (measured, Linux 6.18), which would open the fence of a command still
 *    running, so it happens only under the exclusive lock. Only empty folders are removed (`rmdir`).
 */
const LAUNCHER = `my ($LOCK_SH, $LOCK_EX, $LOCK_NB, $EINTR) = (1, 2, 4, 4);
sub refuse { print STDERR "dsh: the command was not run: $_[0]\\n"; exit($_[1] // 126) }
opendir(my $fds, '/proc/self/fd') or refuse('its inherited descriptors cannot be listed');
my @open = grep { /^\\d+$/ && $_ > 2 } readdir($fds);
closedir($fds);
for my $fd (@open) { my $handle; close($handle) if open($handle, '<&=', $fd) }
$SIG{$_} = sub {} for qw(TERM INT HUP);
my $parent = getppid();
my ($wait, $groups) = splice(@ARGV, 0, 2);
my @held;
for (1 .. $groups) {
  my ($lock, $n) = splice(@ARGV, 0, 2);
  my @points = splice(@ARGV, 0, $n);
  open(my $fh, '+>>', $lock) or refuse("the sandbox fence lock $lock cannot be taken");
  my $deadline = time + $wait;
  until (flock($fh, $LOCK_SH | $LOCK_NB)) {
    refuse("the sandbox fence lock $lock cannot be taken") if time >= $deadline;
    select(undef, undef, undef, 0.01);
  }
  syswrite($fh, join('', map { "$_\\n" } @points));
  push @held, $fh;
}
my ($prlimit, $nlimits) = splice(@ARGV, 0, 2);
my @limits = splice(@ARGV, 0, 3 * $nlimits);
my $njoin = shift @ARGV;
my @join = splice(@ARGV, 0, $njoin);
my ($pids_events, $memory_events, $fsize, $cpu, $procs, $memory, $dashes) = splice(@ARGV, 0, 7);
refuse('the launcher was given no command', 125) unless defined $dashes && $dashes eq '--' && @ARGV;
sub count {
  my ($key, $file) = @_;
  my $n = 0;
  return $n unless length $file && open(my $fh, '<', $file);
  while (<$fh>) { $n = $1 if /^$key (\\d+)/ }
  return $n;
}
my ($forks0, $kills0) = (count('max', $pids_events), count('oom_kill', $memory_events));
my $pid = fork;
defined $pid or refuse("fork failed: $!");
if (!$pid) {
  for my $file (@join) {
    my $fh;
    open($fh, '>', $file) && syswrite($fh, "$$\\n") && close($fh)
      or do { print STDERR "dsh: cannot join the command's cgroup $file: $!\\n"; exit 125 };
  }
  while (@limits) {
    my ($resource, $soft, $hard) = splice(@limits, 0, 3);
    my $value = pack('QQ', $soft, $hard);
    # Numbers from @ARGV are strings, which syscall would pass as pointers: + 0 makes them integers.
    syscall($prlimit + 0, 0, $resource + 0, $value, 0) == 0
      or do { print STDERR "dsh: cannot set the sandbox's resource limit $resource: $!\\n"; exit 125 };
  }
  exec { $ARGV[0] } @ARGV;
  print STDERR "dsh: cannot run $ARGV[0]: $!\\n";
  exit 127;
}
$SIG{ALRM} = sub { if (getppid() != $parent) { kill 'KILL', $pid } else { alarm 1 } };
alarm 1;
my $r;
do { $r = waitpid($pid, 0) } while ($r == -1 && $! == $EINTR);
alarm 0;
my $status = $?;
my $code = $status >> 8;
print STDERR "dsh: exit 153 is SIGXFSZ: a write went past the sandbox's file-size limit (sandbox.limits.fileSize: $fsize)\\n" if $code == 153 && length $fsize;
print STDERR "dsh: exit 152 is SIGXCPU: a process used up the sandbox's CPU-time limit (sandbox.limits.cpuSeconds: $cpu)\\n" if $code == 152 && length $cpu;
print STDERR "dsh: the command reached the sandbox's process limit (sandbox.limits.processes: $procs): new processes were refused\\n" if count('max', $pids_events) != $forks0;
print STDERR "dsh: a process was killed for using more than the sandbox's memory limit (sandbox.limits.memory: $memory)\\n" if count('oom_kill', $memory_events) != $kills0;
${RELEASE_FENCES}exit($code);
`

/** The argv that runs bubblewrap's argv `argv` under the launcher (see LAUNCHER above). */
export function launchedArgv(plan: LaunchPlan, argv: readonly string[]): string[] {
  if (plan.rlimits.length && plan.prlimit === undefined)
    throw new Error('launchedArgv: rlimits need the prlimit64 system call number')
  return [
    plan.perl,
    '-e',
    LAUNCHER,
    String(plan.waitSeconds),
    String(plan.groups.length),
    ...plan.groups.flatMap(({ lock, points }) => [lock, String(points.length), ...points]),
    String(plan.prlimit ?? 0),
    String(plan.rlimits.length),
    ...plan.rlimits.flatMap(({ resource, soft, hard }) => [String(resource), String(soft), String(hard)]),
    String(plan.procs.length),
    ...plan.procs,
    plan.events.pids ?? '',
    plan.events.memory ?? '',
    plan.labels.fileSize,
    plan.labels.cpuSeconds,
    plan.labels.processes,
    plan.labels.memory,
    '--',
    ...argv,
  ]
}
