# The Linux flows loop (flows/sampler.py): awk runs `ss -tinH state established` every
# interval, joins each socket's two lines, and ranks the flows (flows_rank.awk). -v only
# (` ADDR ADDR `, or empty for all) keeps the flows whose local address is one of them; -v
# pause is the command that waits for the next round.
# Sent as one line inside single quotes (script_text.awk_line): a statement ends in `;` or a
# brace, there is no `!` and no single quote, and comments stand on their own lines.

function flush_output() { fflush() }

# The host's clock (a round's time is the middle of ss's run: a run slowed by a busy host
# moves the reads' time, not the rates).
function now(   up, u) { getline up < "/proc/uptime"; close("/proc/uptime"); split(up, u, " "); return u[1] + 0 }

# The round before is needed for its running totals only: the rest of its line stays home.
function brief(s,   count, word, i, out) {
  count = split(s, word, " ");
  out = word[1] " " word[2] " " word[3] " " word[4];
  for (i = 5; i <= count; i++) if (word[i] ~ /^(bytes_acked|bytes_received|segs_out|retrans|busy|rwnd_limited|sndbuf_limited|delivered):/) out = out " " word[i];
  return out
}

function num(s, name,   i) { i = index(s, " " name ":"); if (i == 0) return 0; return substr(s, i + length(name) + 2) + 0 }

# An endpoint's address and port (ADDR:PORT, [ADDR]:PORT).
function host_of(endpoint,   a) { a = endpoint; sub(/:[^:]*$/, "", a); return a }
function port_of(endpoint,   p) { p = endpoint; sub(/.*:/, "", p); return p }

# Whether a local endpoint (ADDR:PORT, [ADDR]:PORT, with a %zone or ::ffff:) is one wanted.
function keep(endpoint) {
  if (only == "") return 1;
  return index(only, " " bare(host_of(endpoint)) " ") > 0
}

function end_socket() { if (length(socket)) { cur[socket] = num(record, "bytes_acked") + num(record, "bytes_received"); line[socket] = record; total++ } socket = "" }

# One line of ss: a socket's first line (its endpoints) or its indented details.
function take(   c) {
  if ($1 == "Recv-Q" || $1 == "State") return;
  c = substr($0, 1, 1);
  if (c == " " || c == tab) { if (length(socket)) { $1 = $1; record = record " " $0 } return }
  end_socket();
  if (keep($3)) { socket = $3 " " $4; $1 = $1; record = $0; if (own_flow(host_of($3), port_of($3), host_of($4), port_of($4))) mine[socket] = 1 }
}

# The loop is awk itself (exec'd by sh): the process the runner starts is the one that holds
# the output, so stopping it leaves nothing behind holding the pipe.
BEGIN {
  tab = sprintf("%c", 9);
  cmd = "ss -tinH state established 2>/dev/null || ss -tin state established";
  while (1) {
    t0 = now();
    total = 0;
    socket = "";
    while ((cmd | getline) > 0) take();
    close(cmd);
    t = sprintf("%.3f", (t0 + now()) / 2);
    end_socket();
    flush();
    system(pause)
  }
}
