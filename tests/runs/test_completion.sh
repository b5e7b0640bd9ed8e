#!/usr/bin/env bash
# test_completion.sh SOURCE_DIR LOCKLAB_BIN - scripts/locklab.bash, driven
# the way bash drives it (COMP_WORDS, COMP_CWORD), each answer compared
# whole: a completion that offers one word too many is as wrong as one
# that misses one. Runs under set -u, as some users' shells do.
set -uo pipefail
src=${1:?usage: test_completion.sh SOURCE_DIR LOCKLAB_BIN}
bin=${2:?usage: test_completion.sh SOURCE_DIR LOCKLAB_BIN}

# shellcheck source=/dev/null
source "$src/scripts/locklab.bash"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
t=$tmp/files
mkdir -p "$t/sub" "$tmp/bin"
touch "$t/a.json" "$t/b.json" "$t/notes.txt" "$t/h.jsonl"
printf '#!/bin/sh\nprintf "alpha\\nbeta\\n"\n' >"$tmp/bin/names"
printf '#!/bin/sh\nexit 1\n' >"$tmp/bin/broken"
# what a binary from before `list algorithms` prints: the whole listing,
# no names (the completion offers none rather than a list of its own)
printf '#!/bin/sh\nprintf "algorithms:\\n  redis        SET NX PX\\n"\n' >"$tmp/bin/old"
chmod +x "$tmp/bin/"*

failed=0
# names KIND [PREFIX [HEAD [GIVEN...]]]: the names `locklab list KIND`
# prints that start with PREFIX, each after HEAD, but those GIVEN: what
# the completion must offer, read from the binary as the completion reads
# it, never typed here.
names()
{
    local kind=$1 prefix=${2-} head=${3-} name
    local -A given=()
    shift $(($# < 3 ? $# : 3))
    for name in "$@"; do given[$name]=1; done
    "$bin" list "$kind" | while IFS= read -r name; do
        [[ $name == "$prefix"* && -z ${given[$name]+x} ]] && printf '%s%s\n' "$head" "$name"
    done | paste -sd' '
}
algorithms=$(names algorithms)
# options CMD: every option `locklab help CMD` names (its usage, its option
# lines) and --help, read here by grep, not by the completion's parser.
options()
{
    {
        "$bin" help "$1" | sed -n '1,/^$/p' | grep -oE -- '--[a-z][a-z0-9-]*'
        "$bin" help "$1" | grep -oE -- '^  (-[A-Za-z], |    )--[a-z0-9-]+' | grep -oE -- '-[A-Za-z]$|-[A-Za-z],|--[a-z0-9-]+' | tr -d ,
        echo --help
    } | sort -u | paste -sd' '
}
# with PREFIX: those that start with it
options_like()
{
    options "$1" | tr ' ' '\n' | grep -E -- "^$2" | paste -sd' '
}
for cmd in run compare show matrix scorecard check history; do
    if (($(wc -w <<<"$(options $cmd)") < 3)); then
        echo "FAIL: locklab help $cmd names no options: \"$(options $cmd)\""
        exit 1
    fi
done
if (($(wc -w <<<"$algorithms") < 2)); then
    echo "FAIL: $bin list algorithms printed \"$algorithms\": no names to complete"
    exit 1
fi

# expect WANT WORD...: complete the last WORD; WANT is the whole answer,
# space-separated, in any order.
expect()
{
    local got want words
    read -d "" -ra words <<<"$1" # several lines: read to the end
    shift
    COMP_WORDS=("$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    _locklab
    got=$(printf '%s\n' "${COMPREPLY[@]}" | sort | paste -sd' ')
    want=$(printf '%s\n' "${words[@]}" | sort | paste -sd' ')
    if [[ $got != "$want" ]]; then
        echo "FAIL: ${COMP_WORDS[*]}|: got \"$got\", want \"$want\""
        failed=1
    else
        echo "ok: ${COMP_WORDS[*]}|"
    fi
}

expect "run compare matrix scorecard check cluster list show history hosts help --help --version" "$bin" ""
expect "$(options matrix)" "$bin" matrix -
expect "compare check cluster" "$bin" c
expect "--suite --scenario --seeds" "$bin" scorecard --s
expect "--quiet" "$bin" run --q
expect "$(options run)" "$bin" run -
expect "$(options compare)" "$bin" compare -
expect "--algorithms" "$bin" compare --al
expect "--seeds --seed" "$bin" compare --see
expect "$(options_like show --)" "$bin" show --
expect "$(options show)" "$bin" show "$t/a.json" -
expect "--json" "$bin" show "$t/a.json" --j
expect "50,90,99,99.9,100 50,99,99.9,99.99" "$bin" run "$t/a.json" --percentiles ""
expect "--csv" "$bin" compare "$t/a.json" --cs
expect "$algorithms" "$bin" show -a ""
expect "" "$bin" show -c ""
expect "$(options check)" "$bin" check --
expect "--help --history-jsonl --hosts" "$bin" run --h
expect "--help" "$bin" compare -q --he
expect "--help --history" "$bin" show --h
expect "--help" "$bin" check "$t/h.jsonl" --h
expect "--help" "$bin" list -
expect "--help" "$bin" help --
expect "$algorithms" "$bin" run --algorithm ""
expect "$(names algorithms re)" "$bin" run -a re
expect "$(names algorithms re)" "$bin" run --algorithm = re
expect "alpha beta" "$tmp/bin/names" run --algorithm ""
expect "" "$tmp/bin/broken" run --algorithm ""
expect "" "$tmp/bin/old" run --algorithm ""
expect "$(names algorithms re redis, redis)" "$bin" compare --algorithms redis,re
expect "$(names algorithms "" redis,redlock, redis redlock)" "$bin" compare --algorithms redis,redlock,
# -A is compare's short --algorithms: names, never the folder reports/
expect "$(names algorithms re)" "$bin" compare "$t/a.json" -A re
expect "$(names algorithms re redis, redis)" "$bin" compare -A redis,re
expect "alpha beta" "$tmp/bin/names" compare -A ""
expect "$t/a.json $t/b.json $t/sub" "$bin" run "$t/"
expect "$t/a.json $t/b.json $t/sub" "$bin" compare -q "$t/"
expect "$t/h.jsonl $t/sub" "$bin" check "$t/"
expect "$t/sub" "$bin" run --out "$t/"
expect "" "$bin" run --clients ""
expect "up status down" "$bin" cluster ""
expect "--help" "$bin" cluster -
expect "$("$bin" help cluster | grep -oE -- '--[a-z-]+-nodes' | sort -u | paste -sd' ') --dir --help" \
    "$bin" cluster up --
expect "--dir --help" "$bin" cluster down --
expect "--dir --help" "$bin" cluster status --
expect "--help" "$bin" cluster up --h
expect "$t/sub" "$bin" cluster up --dir "$t/"
expect "0 1 3" "$bin" cluster up --zookeeper-nodes ""
expect "0 1 3" "$bin" cluster up --etcd-nodes ""
expect "0 1 2 3" "$bin" cluster up --postgres-nodes ""
expect "0 1 2 3" "$bin" cluster up --mysql-nodes ""
expect "0 1 2 3 4 5 6 7 8" "$bin" cluster up --redis-nodes ""
expect "3 4 5 6 8 9 10 12 15" "$bin" cluster up --redis-cluster-nodes ""
expect "$(names suites)" "$bin" scorecard --suite ""
expect "compare check cluster" "$bin" help c
expect "$(options history)" "$bin" history -
expect "$t/sub" "$bin" history "$t/"
expect "$t/sub" "$bin" history --out "$t/"
expect "history hosts help" "$bin" h
expect "algorithms scenarios workloads faults servers suites" "$bin" list ""
expect "workloads" "$bin" list w
expect "" "$bin" list algorithms ""

for name in locklab build/locklab ./build/locklab; do
    if [[ $(complete -p "$name" 2>/dev/null) != "complete -F _locklab $name" ]]; then
        echo "FAIL: no completion registered for $name"
        failed=1
    fi
done
exit $failed
