#!/bin/bash
# make test-matrix: every lab scenario (tests/lab/run-all.sh all) on 6.1 and
# on each line of the kernel matrix (scripts/lab/kernels), each line with its
# own modules (make modules KVER=LINE), the patched drivers' lanes of the
# other lines (tests/drivers/run.sh lines), DKMS with 6.1 and 5.10 on one disk
# (tests/lab/dkms.sh --kernels 6.1,5.10, when both lines are run), the board
# tarballs of each line (make test-boards [KVER=LINE], a row board-TARGET per
# board target: 6.12 has arm64, arm and arm64-16k), then one summary with the
# table of scenario x kernel (tests/tier/summary.py --matrix).
#
#   tests/tier/matrix.sh [LINE...]     default: 6.1 and every line
#
# Results and logs: build/results/matrix-<date>-<pid>/ (matrix-last links to
# the last run).  Exits non-zero if a scenario failed on any kernel.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/tier/results.sh
. tests/tier/results.sh
RUN=build/results/matrix-$(date +%Y%m%d-%H%M%S)-$$
mkdir -p "$RUN"
ln -sfn "$(realpath "$RUN")" build/results/matrix-last
export PPKIT_RESULTS=$PWD/$RUN/results.tsv
: > "$PPKIT_RESULTS"
lines=("$@")
if [ ${#lines[@]} -eq 0 ]; then
	lines=(6.1)
	mapfile -t -O 1 lines < <(scripts/lab/kernels.sh --lines)
fi
T0=$SECONDS
for line in "${lines[@]}"; do
	if [ "$line" = 6.1 ]; then
		tests/tier/step.sh build-modules host 900 make --no-print-directory modules &&
			tests/tier/step.sh --rows lab "debian 6.1" 7200 env LAB_KERNEL=debian tests/lab/run-all.sh all
	else
		tests/tier/step.sh "build-modules-$line" host 900 make --no-print-directory modules KVER="$line" &&
			tests/tier/step.sh --rows "lab-$line" "debian $line" 7200 env LAB_KERNEL="$line" tests/lab/run-all.sh all
	fi
done
# DKMS across kernels: 6.1 and 5.10 installed on one guest disk, one tarball
# for both, each kernel boots and modprobes its own build (tests/lab/dkms.sh
# --kernels; its own lane: it runs on both kernels)
if [[ " ${lines[*]} " == *" 6.1 "* && " ${lines[*]} " == *" 5.10 "* ]]; then
	tests/tier/step.sh dkms-kernels "debian 6.1+5.10" 1800 tests/lab/dkms.sh --kernels 6.1,5.10
fi
# the patched drivers on the other lines: build, static, load, the Orange Pi PC
# (the Orange Pi lanes run the board's own ppctl: build/bin/arm/ppctl)
tests/tier/step.sh build-tools-arm host 1800 make --no-print-directory tools ARCH=arm
tests/tier/step.sh --rows drivers-lines host 3600 tests/drivers/run.sh lines
# The board tarballs, built for and installed on each line's ARM kernels
# (tests/boards/tarball.py), on the lines named here (all of them: a line
# left out gets a SKIP row with the reason).
BOARD_LINES=${BOARD_LINES:-6.1 5.10 6.12}
for line in "${lines[@]}"; do
	if [ "$line" = 6.1 ]; then
		boards=(arm64 arm) kver=()
	else
		mapfile -t boards < <(scripts/lab/kernels.sh --boards "$line")
		kver=(KVER="$line")
	fi
	for b in "${boards[@]}"; do
		case " $BOARD_LINES " in
		*" $line "*)
			tests/tier/step.sh "board-$b" "debian $line" 900 \
				make --no-print-directory test-boards BOARDS="$b" "${kver[@]}" ;;
		*)
			results_row "$PPKIT_RESULTS" "board-$b" "debian $line" "not run" - - \
				"$line is not in BOARD_LINES (tests/tier/matrix.sh): BOARD_LINES=\"... $line\" runs it" ;;
		esac
	done
done
echo "=== make test-matrix: $((SECONDS - T0)) s"
python3 tests/tier/summary.py "$PPKIT_RESULTS" --title "make test-matrix" --matrix
