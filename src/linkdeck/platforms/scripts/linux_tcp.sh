# The Linux sampler's TCP setup, run once before its loop (linux_sampler.sh, in place of its
# TCP_SETUP word): the two headers (snmp's Tcp:, netstat's TcpExt:) give the words wanted
# ($tcp_names, which the loop sends with every slow-facts frame) and the shifts from one to
# the next counted over both headers' words in a row ($tcp_shifts), which awk learns from the
# SHIFTS line; each tick awk picks the values by those shifts (linux_tcp.awk).
# shellcheck shell=sh
tcp_shifts=
tcp_header=
tcpext_header=
# shellcheck disable=SC2034 # each header's values line is read only to be skipped
[ -r /proc/net/snmp ] && while read -r header && read -r value; do case $header in Tcp:*) tcp_header=$header;; esac; done < /proc/net/snmp
[ -r /proc/net/netstat ] && read -r tcpext_header < /proc/net/netstat
word_at=0
last_at=0
for word in $tcp_header $tcpext_header; do
  case $word in @TCP_NAMES@) tcp_names="$tcp_names $word"; tcp_shifts="$tcp_shifts $((word_at-last_at))"; last_at=$word_at;; esac
  word_at=$((word_at+1))
done
have_tcp=0
have_tcpext=0
[ -n "$tcp_header" ] && have_tcp=1
[ -n "$tcpext_header" ] && have_tcpext=1
echo "@SHIFTS@ $have_tcp $have_tcpext$tcp_shifts"
