# The illumos flows loop (flows/sampler.py): connstat's own loop through awk
# (flows_illumos.awk, flows_rank.awk). @NAME@ words are filled in by script_text.fill (the
# fields, the top count, the interval in whole seconds, the local addresses); sent as one line.
# The session's SSH_CONNECTION (empty on the machine linkdeck runs on) names the connection
# linkdeck itself rides, which the loop prints apart (flows_rank.awk).
# shellcheck shell=sh
PATH=$PATH:/usr/bin:/usr/sbin
export LC_ALL=C
command -v connstat >/dev/null 2>&1 || { echo '@MISSING@ connstat'; exit 0; }
connstat -P -e -T u -o @FIELDS@ -i @EVERY@ | awk -v ssh="$SSH_CONNECTION" -v n=@TOP@ -v iv=@EVERY@ -v only='@ONLY@' '@PROGRAM@'
