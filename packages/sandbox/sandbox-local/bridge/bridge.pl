# The network bridge inside a confined command's private network namespace (@dsh/sandbox-local), the fast
# twin of bridge.mjs: perl starts in a few milliseconds where node needs tens, and this runs before every
# confined command. It listens on the namespace's own loopback, where HTTP(S)_PROXY points, and carries
# each connection (one forked child each) to the host's allow-list proxy through the Unix socket bound into
# the sandbox. It prints `ready` once listening and dies with the command (pid namespace).
use strict;
use warnings;
use IO::Select;
use IO::Socket::INET;
use IO::Socket::UNIX;

my ($path, $port) = @ARGV;
# A Ctrl-C in the command's terminal is for the command, not for its network; children reap themselves.
$SIG{$_} = 'IGNORE' for qw(INT HUP QUIT PIPE CHLD);

my $server = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => $port, Listen => 128, ReuseAddr => 1) or exit 1;
$| = 1;
print "ready\n";
close STDOUT;

while (1) {
  my $client = $server->accept or next;
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
  my $upstream = IO::Socket::UNIX->new(Peer => $path, Type => SOCK_STREAM) or return;
  my %other = ($client => $upstream, $upstream => $client);
  my $select = IO::Select->new($client, $upstream);
  my $buffer;
  while ($select->count) {
    for my $from ($select->can_read) {
      my $read = sysread($from, $buffer, 65536);
      if (!$read) {
        shutdown($other{$from}, 1);
        $select->remove($from);
        next;
      }
      for (my $done = 0; $done < $read;) {
        my $wrote = syswrite($other{$from}, $buffer, $read - $done, $done);
        return if !defined $wrote;
        $done += $wrote;
      }
    }
  }
}
