# The illumos flows loop (flows/sampler.py): connstat's own loop (-i) prints a block of -P
# lines after each `= TIME` line (-T u: whole seconds, too coarse for a rate, so a round spans
# the interval connstat was asked for, -v iv); a block is complete when the next one's time
# line comes, so each round shows one interval late. Ranked by flows_rank.awk.
# Sent as one line inside single quotes (script_text.awk_line): a statement ends in `;` or a
# brace, there is no `!` and no single quote, and comments stand on their own lines.

# No fflush in every illumos awk: system("") flushes (POSIX).
function flush_output() { system("") }

function brief(s) { return s }

BEGIN { FS = "," }

/^= / { if (started) flush(); started = 1; t = substr($0, 3) + 0; if (length(pt)) pt = t - iv; total = 0; next }

started && (only == "" || index(only, " " $1 " ") > 0) { k = $1 "," $2 "," $3 "," $4; if (own_flow($1, $2, $3, $4)) mine[k] = 1; cur[k] = ($5 + $6); line[k] = $0; total++ }
