#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The libFuzzer targets (tests/fuzz/): builds them (make fuzz) and runs
# each for FUZZ_SECS seconds (default 6; fuzz_nics and fuzz_env, small
# parsers that saturate within seconds, 7/10 of it, which keeps the four
# near 25 s; scripts/check-full.sh: 30) over a copy of its seed corpus,
# after replaying the inputs kept in tests/fuzz/regress/<target>/; one
# test point per target, passing when libFuzzer exits 0, with the number
# of executions it reports.  Inputs of known bugs not fixed yet
# (tests/fuzz/known/<target>/) replay as TODO test points.  Skips without
# clang's libFuzzer (FUZZ_CC, default clang or clang-14; Debian:
# libclang-rt-14-dev).
. "$(dirname "$0")/../lib/tap.sh"

cc=${FUZZ_CC:-$(command -v clang || command -v clang-14 || echo clang)}
secs=${FUZZ_SECS:-6}
cd "$R2CC_REPO" || exit 1
mkdir -p "$R2CC_BUILD" && build=$(cd "$R2CC_BUILD" && pwd) ||
	skip_all "no build directory $R2CC_BUILD"

command -v "$cc" >/dev/null || skip_all "$cc not installed"
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n);\nint LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' \
	>"$probe/p.c"
"$cc" -fsanitize=fuzzer -o "$probe/p" "$probe/p.c" >/dev/null 2>&1 ||
	skip_all "$cc has no libFuzzer (Debian: libclang-rt-14-dev)"

plan_later
if ! out=$(make -s -j"$(nproc)" BUILD="$build" FUZZ_CC="$cc" fuzz 2>&1); then
	fail "make fuzz"
	diag "$(tail -n 40 <<<"$out")"
	done_testing
fi

for src in tests/fuzz/fuzz_*.c; do
	t=$(basename "$src" .c)
	case $t in
	fuzz_nics | fuzz_env) s=$((secs * 7 / 10)); [ "$s" -ge 1 ] || s=1 ;;
	*) s=$secs ;;
	esac
	out=$(tests/fuzz/run.sh "$build/fuzz/$t" "$s" 2>&1)
	rc=$?
	execs=$(sed -n "s/^$t: execs \([0-9?]*\) .*/\1/p" <<<"$out")
	ok "$([ $rc = 0 ] && echo 1)" "$t: ${execs:-?} executions in $s s"
	diag "$out"
done

# A known bug's input, with the target's workaround for it turned off:
# "not ok # TODO" while it still crashes; a TODO that passes says the bug
# is fixed (move the input to regress/, drop the workaround).
for f in tests/fuzz/known/*/*; do
	[ -f "$f" ] && [[ $(basename "$f") != README* ]] || continue
	t=$(basename "$(dirname "$f")")
	_tap_n=$((_tap_n + 1))
	if FUZZ_KNOWN_BUGS=1 "$build/fuzz/$t" "$f" >/dev/null 2>&1; then
		echo "ok $_tap_n - $t: known bug $f no longer crashes # TODO fixed: move it to tests/fuzz/regress/$t/"
	else
		echo "not ok $_tap_n - $t: known bug $f still crashes # TODO see tests/fuzz/known/README"
	fi
done
done_testing
