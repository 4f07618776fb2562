# The Linux flows loop (flows/sampler.py): the awk program (flows_linux.awk,
# flows_rank.awk) is the loop. @NAME@ words are filled in by script_text.fill (the top
# count, the local addresses, the interval, all checked); sent as one line.
# The session's SSH_CONNECTION (empty on the machine linkdeck runs on) names the connection
# linkdeck itself rides, which the loop prints apart (flows_rank.awk).
# shellcheck shell=sh
PATH=$PATH:/usr/sbin:/sbin
export LC_ALL=C
command -v ss >/dev/null 2>&1 || { echo '@MISSING@ ss'; exit 0; }
exec awk -v ssh="$SSH_CONNECTION" -v n=@TOP@ -v only='@ONLY@' -v pause='sleep @INTERVAL@ >/dev/null' '@PROGRAM@'
