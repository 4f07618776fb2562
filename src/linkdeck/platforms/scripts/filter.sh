# A sampler's loop (already one line) with its output sent through the delta filter's awk
# (delta.awk, after the sampler's own rules). The awk is the last command, so it lives as
# long as the loop and ends with the session. mawk (Debian's and Ubuntu's awk) fills its
# whole input buffer before it reads a line, holding frames back for seconds, unless told
# -W interactive; other awks do not know the flag and read lines as they come.
# shellcheck shell=sh
filter=@AWK@
case $(@AWK@ -W version 2>&1 </dev/null) in *mawk*) filter='@AWK@ -W interactive';; esac
# shellcheck disable=SC2086 # $filter is a command and its options
{ @LOOP@; } | $filter '@PROGRAM@'
