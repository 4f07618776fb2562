# One poll of bench_ssh.py's exec-per-poll baseline: a command of its own on the SSH
# connection every tick, printing a frame as linkdeck's streaming sampler does, one grep per
# section: the tick (the uptime, /proc/net/dev, each link's state) and, every few ticks
# (WITH_FACTS 1), the slow facts (the links' kinds and attributes from sysfs, their
# addresses from `ip -j addr`). Filled in and sent as one line by script_text, as the
# samplers are.
# shellcheck shell=sh
# shellcheck disable=SC2086 # $sys_net (a fixed path) is meant to glob
sys_net=/sys/class/net
with_facts=@WITH_FACTS@
printf '%s\n%s\n' '@FRAME_BEGIN@' '@SECTION@tick'
grep -Hs . /proc/uptime /proc/net/dev $sys_net/*/operstate $sys_net/*/carrier_changes
if [ $with_facts -eq 1 ]; then
  echo '@SECTION@kinds'
  grep -Hs . $sys_net/*/type $sys_net/*/uevent $sys_net/*/device/uevent $sys_net/*/tun_flags $sys_net/*/bonding/slaves $sys_net/*/bridge/bridge_id
  echo '@SECTION@attrs'
  grep -Hs . $sys_net/*/mtu $sys_net/*/speed $sys_net/*/duplex $sys_net/*/operstate $sys_net/*/carrier_changes
  echo '@SECTION@ip_addr'
  ip -j addr 2>/dev/null
  echo
fi
echo '@FRAME_END@'
