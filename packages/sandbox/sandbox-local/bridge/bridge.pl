# The network bridge inside a confined command's private network namespace (@dsh/sandbox-local), the fast
# twin of bridge.mjs: it runs before every confined command, so it loads no module at all (IO::Socket and
# even Socket cost perl 8-14 ms to load, the bare interpreter 2 ms; docs/performance.md, "Where a step
# goes") and uses perl's built-in socket calls with Linux's constants (bubblewrap is Linux only). It listens
# on the namespace's own loopback, where HTTP(S)_PROXY points, and carries each connection (one forked
# child each) to the host's allow-list proxy through the Unix socket bound into the sandbox. It prints
# `ready` once listening and dies with the command (pid namespace).
use strict;

my ($path, $port) = @ARGV;
my ($AF_UNIX, $AF_INET, $SOCK_STREAM, $SOL_SOCKET, $SO_REUSEADDR, $EINTR) = (1, 2, 1, 1, 2, 4);
# A Ctrl-C in the command's terminal is for the command, not for its network; children reap themselves.
$SIG{$_} = 'IGNORE' for qw(INT HUP QUIT PIPE CHLD);

socket(my $server, $AF_INET, $SOCK_STREAM, 0) or exit 1;
setsockopt($server, $SOL_SOCKET, $SO_REUSEADDR, pack('l', 1)) or exit 1;
# struct sockaddr_in: family (host order), port (network order), 127.0.0.1, zero padding.
bind($server, pack('S n C4 x8', $AF_INET, $port, 127, 0, 0, 1)) or exit 1;
listen($server, 128) or exit 1;
$| = 1;
print "ready\n";
close STDOUT;

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
