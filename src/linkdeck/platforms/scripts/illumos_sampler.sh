# The illumos/Solaris sampler (illumos.py): each tick one kstat (the links' counters and the
# TCP counters); every few ticks, and on the tick the set of links changes, the links, ports,
# aggregations, VNICs, speeds and addresses from dladm and ipadm, and the default routes.
# @NAME@ words are filled in by script_text.fill (each command's parseable field list); the
# file is sent as one line (script_text.sh_line), so it has no `!` and comments stand alone.
# shellcheck shell=sh
# shellcheck disable=SC2086 # $counters is meant to split into words, to count them
# shellcheck disable=SC2016 # the awk programs' $1 is awk's

set -f
ticks=0
last_words=-1
facts_every=@FACTS_EVERY@
full_every=@FULL_EVERY_TICKS@
# The client asks for each tick with a newline on stdin, read from fd 3; the loop's commands
# get /dev/null, so none of them can swallow a tick. EOF (the client gone) ends the loop.
exec 3<&0 </dev/null
while :; do
  # kstat is read first so the facts can be read again on the very tick the set of links
  # changes (a VNIC created, an aggr port added): the word count of kstat's output changes
  # with the number of links, and counting words needs no extra process on the host.
  counters=$(@KSTAT@ 2>/dev/null)
  set -- $counters
  echo '@FRAME_BEGIN@'
  if [ $((ticks % facts_every)) -eq 0 ] || [ $# -ne $last_words ]; then
    # a whole frame (delta.awk) now and then and when the set of links changed
    if [ $((ticks % full_every)) -eq 0 ] || [ $# -ne $last_words ]; then echo '@FULL@'; fi
    echo '@SECTION@link'
    dladm show-link -p -o @LINK_FIELDS@ 2>/dev/null
    echo '@SECTION@phys'
    dladm show-phys -p -o @PHYS_FIELDS@ 2>/dev/null
    echo '@SECTION@mac'
    dladm show-phys -m -p -o @MAC_FIELDS@ 2>/dev/null
    echo '@SECTION@aggr'
    dladm show-aggr -p -L -o @AGGR_FIELDS@ 2>/dev/null
    # Solaris 11 names the VLAN field "vids": when the full field list is refused, ask
    # again for the fields every release has.
    echo '@SECTION@vnic'
    dladm show-vnic -p -o @VNIC_FIELDS@ 2>/dev/null || { echo '@SECTION@vnic-min'; dladm show-vnic -p -o @VNIC_MIN_FIELDS@ 2>/dev/null; }
    echo '@SECTION@linkprop'
    dladm show-linkprop -c -o @LINKPROP_FIELDS@ -p speed 2>/dev/null
    echo '@SECTION@addr'
    ipadm show-addr -p -o @ADDR_FIELDS@ 2>/dev/null
    # Only the header and the default rows cross the network, not the whole table (plain
    # comparisons only: Solaris's /usr/bin/awk is the old awk).
    echo '@SECTION@route'
    netstat -rn -f inet 2>/dev/null | awk '$1 == "default" || $1 ~ /^Destination/'
    echo '@SECTION@route6'
    netstat -rn -f inet6 2>/dev/null | awk '$1 == "default" || $1 ~ /^Destination/'
  fi
  last_words=$#
  echo '@SECTION@kstat'
  printf '%s\n' "$counters"
  echo '@FRAME_END@'
  ticks=$((ticks + 1))
  # shellcheck disable=SC2034 # the newline only says when
  read -r tick <&3 || break
done
