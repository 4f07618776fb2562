# A sampler's loop (already one line) with its output sent through the delta filter's awk
# (delta.awk, after the sampler's own rules). The awk is the last command, so it lives as
# long as the loop and ends with the session. mawk (Debian's and Ubuntu's awk) fills its
# whole input buffer before it reads a line, holding frames back for seconds, unless told
# -W interactive; other awks do not know the flag and read lines as they come.
# shellcheck shell=sh
filter=@AWK@
case $(@AWK@ -W version 2>&1 </dev/null) in *mawk*) filter='@AWK@ -W interactive';; esac
# The ticks (whatever the loop reads) pass through a reader of their own: at their EOF (the
# session's channel closed, nobody left to read) it ends the whole process group, the loop
# stuck in a command that hangs included, which would never get back to its `read`. Only
# where the shell leads its group (sshd's session, linkdeck's own): elsewhere there is no
# group -$$ and the kill does nothing; the loop then ends at the EOF passed on.
leader=$$
# shellcheck disable=SC2086 # $filter is a command and its options
{ while IFS= read -r line; do printf '%s\n' "$line"; done; kill -s KILL -- -"$leader" 2>/dev/null; } | { @LOOP@; } | $filter '@PROGRAM@'
