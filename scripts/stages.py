#!/usr/bin/env python3
"""Where grundy-server's CPU goes, by stage of a move.

Reads `perf script -F comm,tid,ip,sym` (call stacks recorded with
`--call-graph dwarf`) on stdin and prints each stage's share of the samples,
then the symbols that took the most samples of their own. Used by
scripts/profile.sh; see docs/performance.md.

A sample belongs to the first stage (in the order of STAGES) whose test its
stack passes: the send and recv system calls wherever they are made, then
the thread or task it ran in (the store's writer thread, a connection's
task, a room's task, a tournament's), then the runtime's own work.
"""

import collections
import signal
import sys


def has(*names):
    """A test: some frame of the stack contains one of `names`."""
    return lambda comm, stack: any(n in frame for frame in stack for n in names)


def thread(prefix):
    return lambda comm, stack: comm.startswith(prefix)


def both(*tests):
    return lambda comm, stack: all(t(comm, stack) for t in tests)


STORE = thread("grundy-store")
SEND = has("__libc_send", "__x64_sys_sendto", "__x64_sys_sendmsg", "__libc_sendmsg")
RECV = has("__libc_recv", "__x64_sys_recvfrom", "__x64_sys_readv")

# (stage, test), in the order they are tried.
STAGES = [
    ("store: fsync", both(STORE, has("fsync", "fdatasync"))),
    ("store: WAL writes", both(STORE, has("pwrite"))),
    # SQLite's b-trees and page cache, the channels, waking the rooms.
    ("store: the rest", STORE),
    ("send syscalls", SEND),
    ("recv syscalls", RECV),
    ("connection tasks", has("connection::serve")),
    ("room tasks", has("room::Room::run", "room::Room::handle")),
    ("tournament tasks", has("tournament::")),
    (
        "runtime: park, epoll",
        has("::park_internal", "::park_driver", "::park_condvar", "Parker::park", "epoll_wait", "Driver::turn"),
    ),
    ("runtime: scheduling", has("tokio::runtime")),
    ("other", lambda comm, stack: True),
]


def samples(lines):
    """(comm, frames innermost first) for each sample of `perf script`."""
    comm, stack = None, []
    for line in lines:
        if not line.strip():
            continue
        if line[0] not in " \t":
            if comm is not None:
                yield comm, stack
            comm, stack = line.split()[0], []
        else:
            parts = line.split(None, 1)
            if len(parts) == 2:
                stack.append(parts[1].strip())
    if comm is not None:
        yield comm, stack


def classify(comm, stack):
    return next(name for name, test in STAGES if test(comm, stack))


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    shares = collections.Counter()
    leaves = collections.Counter()
    total = 0
    for comm, stack in samples(sys.stdin):
        total += 1
        shares[classify(comm, stack)] += 1
        # The innermost frame with a name ("{closure#0}" and "{async_fn#0}"
        # say nothing on their own).
        named = next((f for f in stack if not f.startswith("{")), None)
        if named:
            leaves[named] += 1
    if total == 0:
        sys.exit("stages.py: no samples on stdin (perf script output expected)")
    print(f"{total} samples")
    print()
    print(f"{'stage':<24} {'share':>7}")
    for name, _ in STAGES:
        if shares[name]:
            print(f"{name:<24} {100 * shares[name] / total:6.1f} %")
    print()
    print("top symbols (own samples):")
    for symbol, n in leaves.most_common(25):
        print(f"{100 * n / total:6.2f} %  {symbol[:110]}")


if __name__ == "__main__":
    main()
