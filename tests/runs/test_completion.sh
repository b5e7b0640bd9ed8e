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

expect "run compare matrix scorecard check cluster list show history help --help --version" "$bin" ""
expect "--seeds --only --out -o --quiet -q --csv --json --percentiles --help" "$bin" matrix -
expect "compare check cluster" "$bin" c
expect "--suite --scenario --seeds" "$bin" scorecard --s
expect "quick standard" "$bin" scorecard --suite ""
expect "--quiet" "$bin" run --q
expect "--algorithm -a --clients -c --duration -d --requests -n --seed -s --out -o --quiet -q
    --show-violations --redis -r --zookeeper -z --etcd --postgres --sentinel --csv --json
    --percentiles --help" "$bin" run -
expect "--algorithms -A --seeds --clients -c --duration -d --requests -n --seed -s --out -o --quiet -q
    --show-violations --redis -r --zookeeper -z --etcd --postgres --sentinel --csv --json
    --percentiles --help" "$bin" compare -
expect "--algorithms" "$bin" compare --al
expect "--seeds --seed" "$bin" compare --see
expect "--algorithm --clients --duration --requests --seed --redis --zookeeper --etcd --postgres --sentinel --json \
    --help" "$bin" show --
expect "--algorithm -a --clients -c --duration -d --requests -n --seed -s --redis -r
    --zookeeper -z --etcd --postgres --sentinel --json --help" "$bin" show "$t/a.json" -
expect "--json" "$bin" show "$t/a.json" --j
expect "50,90,99,99.9,100 50,99,99.9,99.99" "$bin" run "$t/a.json" --percentiles ""
expect "--csv" "$bin" compare "$t/a.json" --cs
expect "$algorithms" "$bin" show -a ""
expect "" "$bin" show -c ""
expect "--expect --show-violations --help" "$bin" check --
expect "--help" "$bin" run --h
expect "--help" "$bin" compare -q --he
expect "--help" "$bin" show --h
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
expect "--redis-nodes --zookeeper-nodes --etcd-nodes --postgres-nodes --dir --help" "$bin" cluster up --
expect "--dir --help" "$bin" cluster down --
expect "--dir --help" "$bin" cluster status --
expect "--help" "$bin" cluster up --h
expect "$t/sub" "$bin" cluster up --dir "$t/"
expect "0 1 3" "$bin" cluster up --zookeeper-nodes ""
expect "0 1 3" "$bin" cluster up --etcd-nodes ""
expect "0 1 2 3" "$bin" cluster up --postgres-nodes ""
expect "compare check cluster" "$bin" help c
expect "--out -o --help" "$bin" history -
expect "$t/sub" "$bin" history "$t/"
expect "$t/sub" "$bin" history --out "$t/"
expect "history help" "$bin" h
expect "algorithms scenarios workloads faults servers" "$bin" list ""
expect "workloads" "$bin" list w
expect "" "$bin" list algorithms ""

for name in locklab build/locklab ./build/locklab; do
    if [[ $(complete -p "$name" 2>/dev/null) != "complete -F _locklab $name" ]]; then
        echo "FAIL: no completion registered for $name"
        failed=1
    fi
done
exit $failed
