# The Linux sampler's TCP counters (after linux_tick.awk, before the delta filter): its
# /proc/net/snmp and /proc/net/netstat read where the loop's READ line stands, their wanted
# values printed where its TCP line stands. The loop's TCP setup (linux_tcp.sh) tells which
# words are wanted in its SHIFTS line.
# Sent as one line inside single quotes (script_text.awk_line): a statement ends in `;` or a
# brace, there is no `!` and no single quote, and comments stand on their own lines.

# The lines of a TCP file but the headers and the other protocols' values.
function read_tcp_file(file,  line) {
  while ((getline line < file) > 0) {
    if (line == "" || line ~ /^(Ip|Icmp|IcmpMsg|IpExt|Udp|UdpLite|MPTcpExt): / || line ~ /^[A-Za-z]+: [A-Za-z]/) continue;
    tcp_lines[++tcp_count] = file ":" line
  }
  close(file)
}

# This tick's TCP values (tcp_values): the first two lines left are the Tcp: and TcpExt:
# values, whose wanted words the shifts pick. Should a line be missing that the headers had,
# nothing is picked rather than the wrong words; a line of a protocol a newer kernel added
# goes into the frame for the parser to skip.
function read_tcp(  at, k, tcp, tcpext, word, words) {
  tcp_count = 0;
  tcp_values = "";
  read_tcp_file("/proc/net/snmp");
  read_tcp_file("/proc/net/netstat");
  at = 1;
  tcp = "";
  tcpext = "";
  if (at <= tcp_count && index(tcp_lines[at], "/proc/net/snmp:Tcp:") == 1) tcp = tcp_lines[at++];
  if (at <= tcp_count && index(tcp_lines[at], "/proc/net/netstat:TcpExt:") == 1) tcpext = tcp_lines[at++];
  for (; at <= tcp_count; at++) frame_lines[++frame_count] = tcp_lines[at];
  if ((have_tcp == 1 && tcp == "") || (have_tcpext == 1 && tcpext == "")) return;
  words = split(tcp " " tcpext, word, " ");
  at = 1;
  for (k = 1; k <= shift_count; k++) {
    if (shift[k] + 0 >= words - at + 1) break;
    at += shift[k];
    tcp_values = tcp_values " " word[at]
  }
}

# Once, from the loop: whether each header was there, and the shifts between wanted words.
index($0, "@SHIFTS@ ") == 1 {
  have_tcp = $3;
  have_tcpext = $4;
  shift_count = 0;
  for (k = 5; k <= NF; k++) shift[++shift_count] = $k;
  next
}

$0 == "@TCP@" { frame_lines[++frame_count] = "tcp:" tcp_values; next }
