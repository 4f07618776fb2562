# The flows loops' ranking (flows/sampler.py), before each OS's own rules (flows_linux.awk,
# flows_illumos.awk), which fill cur (bytes a flow has moved, by its key) and line (its
# record), mark mine[key] for linkdeck's own SSH connection (own_flow) and call flush at the
# end of a round; -v n is how many flows to print, -v ssh the session's SSH_CONNECTION.
# Sent as one line inside single quotes (script_text.awk_line): a statement ends in `;` or a
# brace, there is no `!` and no single quote, and comments stand on their own lines.

# An address as both sshd and each OS's tool may write it: no brackets, %zone or ::ffff:.
function bare(a) {
  if (substr(a, 1, 1) == "[") a = substr(a, 2, length(a) - 2);
  sub(/%.*/, "", a);
  sub(/^::ffff:/, "", a);
  return a
}

# Whether a flow is the connection linkdeck's own session rides: SSH_CONNECTION is
# `client_ip client_port server_ip server_port`, and this host is the server.
function own_flow(la, lp, ra, rp,   w) {
  if (split(ssh, w, " ") < 4) return 0;
  return lp == w[4] && rp == w[2] && bare(la) == bare(w[3]) && bare(ra) == bare(w[1])
}

# Ranks the round's flows by what they moved since the round before (a new one by all it has
# moved), prints the top n each with its record from the round before, then linkdeck's own
# flow (O, unranked: it never takes a place in the top n), and keeps this round's.
function flush(   k, moved, i, m) {
  m = 0;
  for (k in cur) {
    if (k in mine) continue;
    moved = cur[k] - ((k in prev) ? prev[k] : 0);
    if (m < n) m++; else if (moved <= best[m]) continue;
    for (i = m; i > 1 && best[i - 1] < moved; i--) { best[i] = best[i - 1]; who[i] = who[i - 1] }
    best[i] = moved;
    who[i] = k
  }
  print "@ROUND@ " (pt == "" ? "-" : pt) " " t " " total " " m;
  for (i = 1; i <= m; i++) { k = who[i]; print "C " line[k]; if (k in pline) print "P " brief(pline[k]) }
  for (k in mine) if (k in line) { print "O " line[k]; if (k in pline) print "P " brief(pline[k]) }
  print "@ROUND@ END";
  flush_output();
  split("", prev);
  split("", pline);
  for (k in cur) { prev[k] = cur[k]; pline[k] = line[k] }
  split("", cur);
  split("", line);
  split("", mine);
  pt = t
}
