# The Linux sampler: one loop per host, framed samples, nothing installed there (linux.py).
# Each tick prints the uptime, /proc/net/dev, the TCP counters and the fast sysfs attributes;
# every few ticks, and on the tick the set of links changes, the slow facts too. The delta
# filter's awk (linux_tick.awk, delta.awk) reads the /proc files where the READ and TCP lines
# stand, so a tick starts no process. @NAME@ words are filled in by script_text.fill; the
# file is sent as one line (script_text.sh_line), so it has no `!` and comments stand alone.
# Interface names are only ever expanded inside double quotes or passed to printf as an
# argument, never evaluated.
# shellcheck shell=sh
# shellcheck disable=SC2086,SC2231 # $sys_net (a fixed path) and $speed_links split and glob

PATH=$PATH:/usr/sbin:/sbin
export LC_ALL=C
sys_net=/sys/class/net
# on a host of at most few_links links every sysfs state file is read every tick; on a
# larger one only its speed links' (each sysfs file is one more read on the host)
few_links=@FEW_LINKS@
ticks_between_facts=@TICKS_BETWEEN_FACTS@
fulls_between=@FULLS_BETWEEN@
offload_fulls=@OFFLOAD_FULLS@
rare_facts=@RARE_FACTS@
# ticks to the next slow-facts frame; links now; slow-facts frames to the next full frame,
# full frames to the next reading of a larger host's offloads, slow-facts frames to the next
# reading of the rare facts (driver, rings, a small host's offloads)
ticks_left=0
link_count=0
fulls_left=0
offload_fulls_left=0
rare_left=0
# the set of links and the carrier_changes lines the last slow-facts frame saw; a larger
# host's links whose speed is real (a NIC, a bond, whatever runs over other links)
last_links=
last_carriers=
speed_links=

# One sysfs file ($file) read by the shell's `read` (built in: no process) into the tick's
# lines, carrier_changes also into $carriers, whose moving brings the slow facts at once.
read_fast() {
  value=
  { read -r value < "$file"; } 2>/dev/null
  [ -n "$value" ] || return 0
  tick_lines="$tick_lines$file:$value$newline"
  case $file in */carrier_changes) carriers="$carriers $file:$value";; esac
}

# The same printed as `grep -H` would: for a handful of links, cheaper than starting a grep.
print_one() {
  value=
  { read -r value < "$file"; } 2>/dev/null
  [ -n "$value" ] && printf '%s:%s\n' "$file" "$value"
}

# Every interface's offloads (veths and bridges too), one grep keeping only the lines read.
read_offloads() {
  if command -v ethtool >/dev/null 2>&1; then
    for dir in $sys_net/*; do
      iface=${dir##*/}
      case "$iface" in -*) continue;; esac
      printf '@SECTION@ethtool_k %s\n' "$iface"
      ethtool -k "$iface" 2>&1
    done | grep -E '^(@SECTION@ethtool_k |(@OFFLOADS@): )'
  fi
}

# A NIC's speed and counters (every slow-facts frame), its rings and driver (rare facts).
read_nics() {
  if command -v ethtool >/dev/null 2>&1; then
    if [ $link_count -le $few_links ]; then set -- $sys_net/*; else set -f; set -- $speed_links; set +f; fi
    for dir in "$@"; do
      [ -e "$dir/device" ] || continue
      iface=${dir##*/}
      case "$iface" in -*) continue;; esac
      printf '@SECTION@ethtool %s\n' "$iface"
      ethtool "$iface" 2>&1
      printf '@SECTION@ethtool_S %s\n' "$iface"
      ethtool -S "$iface" 2>&1
      if [ $rare_left -le 0 ]; then
        printf '@SECTION@ethtool_g %s\n' "$iface"
        ethtool -g "$iface" 2>&1
        printf '@SECTION@ethtool_i %s\n' "$iface"
        ethtool -i "$iface" 2>&1
      fi
    done
  fi
}

# a newline, ending each of the tick's lines (read_fast)
newline=$(printf '\n_')
newline=${newline%_}
# The TCP counters' names (sent with every slow-facts frame), set once by the TCP setup
# (linux_tcp.sh, filled in for TCP_SETUP); without it (linux.build_script's tcp=False, a
# benchmark's reference) the names stay empty and the parser reads no TCP counters.
tcp_names=
@TCP_SETUP@

printf '%s\n%s\n' '@FRAME_BEGIN@' '@SECTION@tick'
# The client asks for each tick with a newline on stdin, read from fd 3; the loop's commands
# get /dev/null, so none of them can swallow a tick. EOF (the client gone) ends the loop.
exec 3<&0 </dev/null
while :; do
  # The set of links: every tick on a host of few links, on the slow-facts ticks on a larger
  # one (a readdir of /sys/class/net lists every namespace's links for the kernel to filter).
  if [ $link_count -le $few_links ] || [ $ticks_left -eq 0 ]; then set -- $sys_net/*; links="$*"; link_count=$#; fi
  # The tick: the shell reads the sysfs state (on a larger host only its speed links'), awk
  # the rest where the READ and TCP lines stand.
  tick_lines=
  carriers=
  if [ $link_count -le $few_links ]; then
    for file in $sys_net/*/operstate $sys_net/*/carrier_changes; do read_fast; done
  else
    set -f
    for dir in $speed_links; do for file in "$dir/operstate" "$dir/carrier_changes"; do read_fast; done; done
    set +f
  fi
  if [ "$links" = "$last_links" ] && [ "$carriers" = "$last_carriers" ] && [ $ticks_left -gt 0 ]; then
    # an ordinary tick, printed with this frame's end and the next one's start: one write
    ticks_left=$((ticks_left-1))
    printf '%s\n%s%s\n%s\n%s\n%s\n' '@READ@' "$tick_lines" '@TCP@' '@FRAME_END@' '@FRAME_BEGIN@' '@SECTION@tick'
  else
    last_carriers=$carriers
    ticks_left=$ticks_between_facts
    printf '%s\n%s%s\n' '@READ@' "$tick_lines" '@TCP@'
    rare_left=$((rare_left-1))
    [ "$links" = "$last_links" ] || rare_left=0
    # A full frame (delta.awk) on the first, when the set of links changed and every few
    # slow-facts frames: with the link kinds, which only change with the set.
    if [ "$links" = "$last_links" ] && [ $fulls_left -gt 0 ]; then
      fulls_left=$((fulls_left-1))
    else
      offload_fulls_left=$((offload_fulls_left-1))
      [ "$links" = "$last_links" ] || offload_fulls_left=0
      last_links=$links
      fulls_left=$fulls_between
      echo '@FULL@'
      echo '@SECTION@kinds'
      grep -Hs . $sys_net/*/type $sys_net/*/uevent $sys_net/*/device/uevent $sys_net/*/tun_flags $sys_net/*/bonding/slaves $sys_net/*/bridge/bridge_id
      # which of the tools some facts come from this host has (a router's busybox has none)
      echo '@SECTION@tools'
      for tool in ethtool ss; do command -v "$tool" >/dev/null 2>&1 && echo "$tool"; done
      if [ $link_count -gt $few_links ]; then
        speed_links=
        for dir in $sys_net/*; do
          set -- "$dir"/lower_*
          if [ -e "$dir/device" ] || [ -e "$dir/bonding" ] || [ -e "$1" ]; then speed_links="$speed_links $dir"; fi
        done
        if [ $offload_fulls_left -le 0 ]; then offload_fulls_left=$offload_fulls; read_offloads; fi
      fi
    fi
    echo '@SECTION@tcp_names'
    echo "$tcp_names"
    # MTU and state come with `ip -j addr`; sysfs is asked for them only where it fails
    echo '@SECTION@ip_addr'
    if ip -j addr 2>/dev/null; then
      echo
      echo '@SECTION@attrs'
      if [ $link_count -le $few_links ]; then
        grep -Hs . $sys_net/*/speed $sys_net/*/duplex $sys_net/*/carrier_changes
      else
        set -f
        for dir in $speed_links; do for file in "$dir/speed" "$dir/duplex"; do print_one; done; done
        set +f
      fi
    else
      echo
      echo '@SECTION@attrs'
      grep -Hs . $sys_net/*/mtu $sys_net/*/speed $sys_net/*/duplex $sys_net/*/operstate $sys_net/*/carrier_changes
      # busybox's ip, an old iproute2: the addresses and MACs as text; no ip at all: ifconfig's
      echo '@SECTION@ip_addr_text'
      ip addr 2>/dev/null || { echo; echo '@SECTION@ifconfig'; ifconfig -a 2>/dev/null; }
    fi
    echo '@SECTION@route'
    # busybox's ip, an old iproute2: the kernel's IPv4 table instead
    ip -j route show default 2>/dev/null || { echo; echo '@SECTION@proc_route'; cat /proc/net/route 2>/dev/null; }
    echo
    echo '@SECTION@route6'
    ip -j -6 route show default 2>/dev/null
    echo
    read_nics
    if [ $link_count -le $few_links ] && [ $rare_left -le 0 ]; then read_offloads; fi
    if [ $rare_left -le 0 ]; then rare_left=$rare_facts; fi
    # the sampler's own CPU so far (the shell and every command it ran)
    echo '@SECTION@times'
    times
    printf '%s\n%s\n%s\n' '@FRAME_END@' '@FRAME_BEGIN@' '@SECTION@tick'
  fi
  # shellcheck disable=SC2034 # the newline only says when
  read -r tick <&3 || break
done
