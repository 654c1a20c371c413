"""How promptly an engine process notices it was told to stop.

Every role stops on SIGTERM by setting a flag (engine.common.startup) that its loops, and the
threads that serve its sockets, look at between waits. The longest such wait is how long
a stop can be kept waiting, once per loop a process stops in turn, and an executor stops
its container's processes one stage after the other: at 50 ms a stopped topology's
containers go in a fraction of a second, and waking 20 times a second costs nothing."""

#: the longest a wait in a process's loops or socket threads keeps a stop waiting
STOP_POLL_MS = 50
