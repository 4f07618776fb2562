#!/bin/sh
# sshd's ForceCommand for a lab host that plays a router or NAS: the session gets its own mount
# namespace in which /usr/sbin and /usr/bin (and so /sbin and /bin, symlinks to them here) are
# the busybox farm "$1", then busybox sh runs what the client asked for. Libraries under /usr/lib
# stay visible, so the farm's copied iperf3 still runs.
# /usr/sbin goes first: the second mount still needs the real mount(8) in /usr/bin.
farm=$1
# shellcheck disable=SC2016 # the inner shell expands $1 and $SSH_ORIGINAL_COMMAND, not this one
exec /usr/bin/unshare -m --propagation private /bin/sh -c '
set -e
/usr/bin/mount --bind "$1" /usr/sbin
/usr/bin/mount --bind "$1" /usr/bin
if [ -z "$SSH_ORIGINAL_COMMAND" ]; then exec /usr/bin/busybox sh -l; fi
exec /usr/bin/busybox sh -c "$SSH_ORIGINAL_COMMAND"
' busybox-login "$farm"
