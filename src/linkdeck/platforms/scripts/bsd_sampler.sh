# The BSD-family sampler (bsd.py): each tick a timestamp, `netstat -i` and the TCP counters;
# every few ticks, and on the tick the set of <Link> rows changes, `ifconfig -a` and the
# default routes. @NAME@ words are filled in by script_text.fill (the netstat and ifconfig
# variants of the OS, tried in order: a release lacks some flags); the file is sent as one
# line (script_text.sh_line), so it has no `!` and comments stand alone.
# shellcheck shell=sh
# shellcheck disable=SC2016 # the awk program's $3 and $1 are awk's

ticks=0
last_links=
facts_every=@FACTS_EVERY@
full_every=@FULL_EVERY_TICKS@
# The client asks for each tick with a newline on stdin, read from fd 3; the loop's commands
# get /dev/null, so none of them can swallow a tick. EOF (the client gone) ends the loop.
exec 3<&0 </dev/null
while :; do
  echo '@FRAME_BEGIN@'
  echo '@SECTION@time'
  date +%s.%N 2>/dev/null
  netstat_rows=$(@NETSTAT@)
  echo '@SECTION@netstat'
  printf '%s\n' "$netstat_rows"
  # OpenBSD's and NetBSD's packet table (their -b prints bytes instead of packets)
  @PACKETS@
  # The host's TCP counters: only the dozen lines read of netstat's hundreds.
  echo '@SECTION@tcp'
  netstat -s -p tcp 2>/dev/null | grep -E '@TCP_GREP@'
  # The <Link> rows name every interface once: a change means one came or went.
  links=$(printf '%s\n' "$netstat_rows" | awk '$3 ~ /^<Link/ {print $1}')
  changed=0
  [ "$links" = "$last_links" ] || changed=1
  if [ $((ticks % facts_every)) -eq 0 ] || [ $changed -eq 1 ]; then
    # a whole frame (delta.awk) now and then and when the set of interfaces changed
    if [ $((ticks % full_every)) -eq 0 ] || [ $changed -eq 1 ]; then echo '@FULL@'; fi
    echo '@SECTION@ifconfig'
    @IFCONFIG@
    # The kernel's answer for the one route it would use: a few lines even on a router that
    # holds a full table (netstat -rn would print all of it).
    echo '@SECTION@route'
    route -n get default 2>/dev/null
    echo '@SECTION@route6'
    route -n get -inet6 default 2>/dev/null
    last_links=$links
  fi
  echo '@FRAME_END@'
  ticks=$((ticks + 1))
  # shellcheck disable=SC2034 # the newline only says when
  read -r tick <&3 || break
done
