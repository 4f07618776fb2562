# In place of linux_tcp.awk, the Linux sampler without its TCP counters (linux.build_script's
# tcp=False): the reference bench/bench_tcp.py measures the TCP reading's cost against. The
# READ line reads no TCP file and the loop's TCP line goes no further; linkdeck itself always
# sends linux_tcp.awk.
# Sent as one line inside single quotes (script_text.awk_line).

function read_tcp() {
}

$0 == "@TCP@" { next }
