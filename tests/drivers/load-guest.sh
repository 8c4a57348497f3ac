#!/bin/sh
# Guest side of tests/drivers/load.py: insmod every module listed in DIR/list
# (Debian's dependencies first, then ours), then rmmod ours in reverse order.
# Prints PPK_LOAD_OK when all of it worked.
dir=$1
fail() { echo "PPK_LOAD_FAIL $*"; exit 1; }
own=""
while read -r file kind; do
	insmod "$dir/$file" || fail "insmod $file"
	name=$(echo "${file#*-}" | sed 's/\.ko$//' | tr - _)
	[ "$kind" = own ] && own="$name $own"
	echo "PPK_LOADED $name ($kind)"
done <"$dir/list"
grep -E "^($(echo $own | tr ' ' '|')) " /proc/modules
for m in $own; do
	rmmod "$m" || fail "rmmod $m"
	echo "PPK_UNLOADED $m"
done
echo "PPK_LOAD_OK"
