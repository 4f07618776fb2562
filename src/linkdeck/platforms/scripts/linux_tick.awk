# The Linux sampler's rules before the delta filter (delta.awk): awk, already running for
# the connection, reads the tick's /proc files with getline, so a tick starts no process.
# The loop (linux_sampler.sh) prints a READ line where the uptime, /proc/net/dev and the TCP
# values go (each line as FILE:LINE, the way `grep -H` prints them) and a TCP line where the
# tick's TCP values are printed. read_tcp and the TCP line's rule come from linux_tcp.awk
# (or, in a benchmark's reference without TCP, linux_no_tcp.awk).
# Sent as one line inside single quotes (script_text.awk_line): a statement ends in `;` or a
# brace, there is no `!` and no single quote, and comments stand on their own lines.

# Every nonempty line of a file, as FILE:LINE, into the frame.
function read_lines(file,  line) {
  while ((getline line < file) > 0) if (line ~ /./) frame_lines[++frame_count] = file ":" line;
  close(file)
}

$0 == "@READ@" { read_tcp(); read_lines("/proc/uptime"); read_lines("/proc/net/dev"); next }
