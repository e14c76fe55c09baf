# The launcher of a proxied confined command inside its private network namespace (@dsh/sandbox-local), the
# fast twin of the bash launcher with bridge.mjs: one perl process closes the descriptors the command would
# inherit, listens on the namespace's own loopback (where HTTP(S)_PROXY points), forks the bridge, and becomes
# the command (no bash before it: docs/performance.md, "Where a step goes"). It loads no module at all
# (IO::Socket and even Socket cost perl 8-14 ms to load, the bare interpreter 2 ms) and uses perl's built-in
# socket calls with Linux's constants (bubblewrap is Linux only). The bridge carries each connection (one
# forked child each) to the host's allow-list proxy through the Unix socket bound into the sandbox, and dies
# with the command (pid namespace).
#
# Usage: perl bridge.pl SOCKET PORT -- COMMAND...
use strict;

my ($path, $port, $dashes, @command) = @ARGV;
sub fail { print STDERR "dsh: the network proxy bridge did not start inside the sandbox\n"; exit 125 }
fail() unless defined $dashes && $dashes eq '--' && @command;

# A descriptor dsh itself was started with leads out of every namespace (src/descriptors.ts): every entry
# of this process's table above stdio is closed first (the listing's own descriptor is gone by then).
opendir(my $fds, '/proc/self/fd') or fail();
my @open = grep { /^\d+$/ && $_ > 2 } readdir($fds);
closedir($fds);
for my $fd (@open) {
  my $handle;
  close($handle) if open($handle, '<&=', $fd);
}

my ($AF_UNIX, $AF_INET, $SOCK_STREAM, $SOL_SOCKET, $SO_REUSEADDR, $EINTR) = (1, 2, 1, 1, 2, 4);
# Perl marks every descriptor above stdio close-on-exec: the command does not inherit the listener.
socket(my $server, $AF_INET, $SOCK_STREAM, 0) or fail();
setsockopt($server, $SOL_SOCKET, $SO_REUSEADDR, pack('l', 1)) or fail();
# struct sockaddr_in: family (host order), port (network order), 127.0.0.1, zero padding.
bind($server, pack('S n C4 x8', $AF_INET, $port, 127, 0, 0, 1)) or fail();
listen($server, 128) or fail();

my $bridge = fork;
fail() unless defined $bridge;
if ($bridge) {
  # Listening already: the command's first connection waits in the backlog until the bridge accepts it.
  close $server;
  exec { $command[0] } @command;
  print STDERR "dsh: cannot run $command[0]: $!\n";
  exit 127;
}

# The bridge: none of the command's output, and a Ctrl-C in its terminal is for the command, not its network;
# children reap themselves.
open(STDIN, '<', '/dev/null');
open(STDOUT, '>', '/dev/null');
open(STDERR, '>', '/dev/null');
$SIG{$_} = 'IGNORE' for qw(INT HUP QUIT PIPE CHLD);
while (1) {
  accept(my $client, $server) or next;
  my $pid = fork;
  if (!defined $pid || $pid) {
    close $client;
    next;
  }
  close $server;
  carry($client);
  exit 0;
}

# Copies bytes both ways until both sides have ended; an end on one side half-closes the other.
sub carry {
  my ($client) = @_;
  socket(my $upstream, $AF_UNIX, $SOCK_STREAM, 0) or return;
  connect($upstream, pack('S Z108', $AF_UNIX, $path)) or return;
  my %other = (fileno($client) => $upstream, fileno($upstream) => $client);
  my %open = (fileno($client) => $client, fileno($upstream) => $upstream);
  my $buffer;
  while (%open) {
    my $want = '';
    vec($want, $_, 1) = 1 for keys %open;
    my $ready = select(my $readable = $want, undef, undef, undef);
    next if $ready < 0 && $! == $EINTR;
    return if $ready < 0;
    for my $fd (keys %open) {
      next unless vec($readable, $fd, 1);
      my $read = sysread($open{$fd}, $buffer, 65536);
      if (!$read) {
        shutdown($other{$fd}, 1);
        delete $open{$fd};
        next;
      }
      for (my $done = 0; $done < $read;) {
        my $wrote = syswrite($other{$fd}, $buffer, $read - $done, $done);
        return if !defined $wrote;
        $done += $wrote;
      }
    }
  }
}
