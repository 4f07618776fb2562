# The flows loops' ranking (flows/sampler.py), before each OS's own rules (flows_linux.awk,
# flows_illumos.awk), which fill cur (bytes a flow has moved, by its key) and line (its
# record) and call flush at the end of a round; -v n is how many flows to print.
# Sent as one line inside single quotes (script_text.awk_line): a statement ends in `;` or a
# brace, there is no `!` and no single quote, and comments stand on their own lines.

# Ranks the round's flows by what they moved since the round before (a new one by all it has
# moved), prints the top n each with its record from the round before, and keeps this round's.
function flush(   k, moved, i, m) {
  m = 0;
  for (k in cur) {
    moved = cur[k] - ((k in prev) ? prev[k] : 0);
    if (m < n) m++; else if (moved <= best[m]) continue;
    for (i = m; i > 1 && best[i - 1] < moved; i--) { best[i] = best[i - 1]; who[i] = who[i - 1] }
    best[i] = moved;
    who[i] = k
  }
  print "@ROUND@ " (pt == "" ? "-" : pt) " " t " " total " " m;
  for (i = 1; i <= m; i++) { k = who[i]; print "C " line[k]; if (k in pline) print "P " brief(pline[k]) }
  print "@ROUND@ END";
  flush_output();
  split("", prev);
  split("", pline);
  for (k in cur) { prev[k] = cur[k]; pline[k] = line[k] }
  split("", cur);
  split("", line);
  pt = t
}
