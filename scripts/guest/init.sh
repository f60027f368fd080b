#!/bin/busybox sh
# /init of the guest's initramfs (scripts/guest/kernel.mjs builds it): mounts
# proc, sys, devtmpfs and tracefs, loads the btrfs module chain listed in
# /etc/modules, turns on the events /etc/events lists, runs /workload.sh (the
# run's own cpio, appended to the base one) with IMG=/dev/vda MNT=/mnt, and
# writes what it found to the output disk /dev/vdb as a tar archive:
#   status (the workload's exit status), stdout, stderr, trace (the trace
#   buffer's text), trace-stats (per CPU: overrun, dropped), kernel (uname -r),
#   times (the guest's uptime in seconds when the workload started and ended),
#   missing-events (events this kernel does not have), log (what init said).
# Unmounts MNT after the workload unless it ran `crash` (touch /tmp/crash):
# then the image is left as a power cut leaves it. Powers off in any case.
/bin/busybox mkdir -p /proc /sys /dev /tmp /mnt /out /bin /sbin
/bin/busybox --install -s /bin
export PATH=/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
say() { echo "BLAB: $*" >/dev/console; echo "$*" >>/out/log; }
# never sync(2) the whole system once the image is mounted: btrfs would commit
# its transaction (and a crash would not be one); only the output disk is
# flushed, and poweroff -n does not sync
finish() {
	if tar -cf /dev/vdb -C /out . 2>>/out/log && blab fsync /dev/vdb >/dev/null; then say "results written"; else say "could not write the results to /dev/vdb"; fi
	poweroff -f -n
}
uname -r >/out/kernel
while read -r m; do
	[ -n "$m" ] || continue
	insmod "/lib/modules/$m" 2>>/out/log || say "insmod $m failed"
done </etc/modules
say "modules loaded at $(cut -d' ' -f1 /proc/uptime) s"
grep -q btrfs /proc/filesystems || { say "no btrfs in this kernel after loading its modules"; echo 125 >/out/status; finish; }
# the disks appear when the virtio driver has probed them
n=0
while [ ! -b /dev/vda ] || [ ! -b /dev/vdb ]; do
	n=$((n + 1))
	[ $n -gt 200 ] && { say "no /dev/vda and /dev/vdb"; poweroff -f -n; }
	sleep 0.1
done
T=/sys/kernel/tracing
mount -t tracefs nodev $T 2>/dev/null
[ -d $T/events ] || { mount -t debugfs nodev /sys/kernel/debug; T=/sys/kernel/debug/tracing; }
: >/out/missing-events
if [ -s /etc/events ]; then
	echo 0 >$T/tracing_on
	echo 65536 >$T/buffer_size_kb
	: >$T/trace
	while read -r e; do
		[ -n "$e" ] || continue
		if [ -d "$T/events/${e%%:*}/${e#*:}" ]; then echo "$e" >>$T/set_event; else echo "$e" >>/out/missing-events; fi
	done </etc/events
	echo 1 >$T/tracing_on
fi
export IMG=/dev/vda MNT=/mnt OUT=/out
crash() { touch /tmp/crash; }
capture() { blab capture "$IMG" "$1"; }
say "workload start"
cut -d' ' -f1 /proc/uptime >/out/times
(. /workload.sh) >/out/stdout 2>/out/stderr
echo $? >/out/status
cut -d' ' -f1 /proc/uptime >>/out/times
say "workload done (status $(cat /out/status))"
if [ -s /etc/events ]; then
	echo 0 >$T/tracing_on
	cat $T/trace >/out/trace
	for c in $T/per_cpu/cpu*; do
		echo "${c##*/} $(grep -E '^(overrun|dropped events):' $c/stats | tr '\n' ' ')" >>/out/trace-stats
	done
fi
if [ ! -e /tmp/crash ] && grep -q " $MNT " /proc/mounts; then
	umount $MNT 2>>/out/log || say "umount $MNT failed"
fi
finish
