# The delta filter (delta.py): holds each section's lines from the frame before and replaces
# every run of unchanged lines with a SAME line counting them. A frame with a FULL line
# anywhere in it is sent whole. Every frame is held until its end marker, then sent in writes
# of up to 4 KB (an ordinary frame: one write, one SSH packet).
# Rules placed before these (a sampler's own, e.g. linux_tick.awk) see every line first: what
# they consume with `next` never reaches the frame, and what they append to
# frame_lines[++frame_count] does.
# Sent as one line inside single quotes (script_text.awk_line): a statement ends in `;` or a
# brace, there is no `!` and no single quote, and comments stand on their own lines.

# Append one line to what is waiting to be written; write when 4 KB are waiting.
function put(line) {
  pending = pending line newline;
  if (length(pending) > 4096) { printf "%s", pending; pending = "" }
}

# The run of unchanged lines so far, as one SAME line.
function end_run() {
  if (run_length > 0) put(same_mark run_length);
  run_length = 0
}

# The frame's lines, each section's compared with the same positions last time. Old lines
# are compared only up to the length that section had last time (last_length): the
# receiver's base is no longer. An unchanged line is not stored again.
function send_frame(  k, line, at, section) {
  section = "";
  at = 0;
  run_length = 0;
  for (k = 1; k <= frame_count; k++) {
    line = frame_lines[k];
    if (substr(line, 1, section_length) == section_mark) {
      end_run();
      if (section > "") last_length[section] = at;
      section = substr(line, section_length + 1);
      at = 0;
      put(line);
      continue
    }
    if (section == "") { put(line); continue }
    at++;
    if (full == 0 && at <= last_length[section] && last_line[section, at] == line) run_length++;
    else { end_run(); put(line); last_line[section, at] = line }
  }
  end_run();
  if (section > "") last_length[section] = at;
  frame_count = 0;
  full = 0
}

BEGIN {
  same_mark = "@SAME@";
  section_mark = "@SECTION@";
  section_length = length(section_mark);
  frame_count = 0;
  full = 0;
  newline = sprintf("%c", 10);
  pending = ""
}

$0 == "@FULL@" { full = 1; next }

$0 == "@FRAME_END@" { send_frame(); put($0); printf "%s", pending; pending = ""; fflush(); next }

{ frame_lines[++frame_count] = $0 }
