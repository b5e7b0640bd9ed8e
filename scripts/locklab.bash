# shellcheck shell=bash
# bash completion for locklab (also typed as build/locklab, ./build/locklab).
# scripts/install-deps.sh installs it as
# /usr/share/bash-completion/completions/locklab; to try it in a shell:
#   source scripts/locklab.bash
# It needs no bash-completion helpers, so a test can source it in a bare bash.

# The names of a kind, one a line, from `locklab list KIND` now: the
# binary's registries are the only list (a binary that cannot answer, or
# answers with anything but names, offers none).
_locklab_names()
{
    local bin=$1 kind=$2 line
    while IFS= read -r line; do
        [[ $line =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] && printf '%s\n' "$line"
    done < <(timeout 2 "$bin" list "$kind" 2>/dev/null)
}

_locklab_words()
{
    mapfile -t COMPREPLY < <(compgen -W "$1" -- "$2")
}

# Directories, plus files matching the glob when one is given. Bash escapes
# and adds the slash itself once told these are file names.
_locklab_paths()
{
    local cur=$1 glob=${2-}
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(
        compgen -d -- "$cur"
        [[ -n $glob ]] && compgen -f -X "!$glob" -- "$cur" | while IFS= read -r f; do
            [[ -d $f ]] || printf '%s\n' "$f"
        done
    )
}

# --algorithms (-A) a,b,c: complete the item after the last comma, leaving out
# the names already given (compare refuses a name given twice).
_locklab_algorithm_list()
{
    local bin=$1 cur=$2 head="" name items=()
    local -A given=()
    if [[ $cur == *,* ]]; then
        head=${cur%,*},
        IFS=, read -ra items <<<"${head%,}"
    fi
    for name in "${items[@]}"; do
        [[ -n $name ]] && given[$name]=1
    done
    COMPREPLY=()
    while IFS= read -r name; do
        [[ -z ${given[$name]+x} && $name == "${cur##*,}"* ]] && COMPREPLY+=("$head$name")
    done < <(_locklab_names "$bin" algorithms)
}

# The value of an option that takes one; returns 1 when prev takes none.
_locklab_option_value()
{
    local bin=$1 prev=$2 cur=$3
    case $prev in
    -a | --algorithm)
        _locklab_words "$(_locklab_names "$bin" algorithms)" "$cur" ;;
    -A | --algorithms) _locklab_algorithm_list "$bin" "$cur" ;;
    -o | --out | --dir | --junit) _locklab_paths "$cur" ;;
    --suite) _locklab_words "quick standard" "$cur"
        [[ $cur == */* || $cur == .* ]] && _locklab_paths "$cur" "*.json" ;;
    --scenario) _locklab_paths "$cur" "*.json" ;;
    --seeds | --classes | --only | --require-safe) COMPREPLY=() ;;
    --json) [[ ${COMP_WORDS[1]-} == show ]] && return 1; _locklab_paths "$cur" ;;
    --percentiles) _locklab_words "50,90,99,99.9,100 50,99,99.9,99.99" "$cur" ;;
    --zookeeper-nodes | --etcd-nodes) _locklab_words "0 1 3" "$cur" ;;
    --postgres-nodes) _locklab_words "0 1 2 3" "$cur" ;;
    -c | --clients | -d | --duration | -n | --requests | -s | --seed | --show-violations | \
        -r | --redis | -z | --zookeeper | --etcd | --postgres | --sentinel | --expect | --redis-nodes)
        COMPREPLY=() ;;
    *) return 1 ;;
    esac
    return 0
}

_locklab_cluster()
{
    local cword=$1 cur=$2 action=${COMP_WORDS[2]-}
    if ((cword == 2)); then
        if [[ $cur == -* ]]; then
            _locklab_words "--help" "$cur"
        else
            _locklab_words "up status down" "$cur"
        fi
    elif [[ $action == up ]]; then
        _locklab_words "--redis-nodes --zookeeper-nodes --etcd-nodes --postgres-nodes --dir --help" "$cur"
    else
        _locklab_words "--dir --help" "$cur"
    fi
}

# list [KIND]: one kind at most; `locklab CMD --help` works for every CMD.
_locklab_list()
{
    local cword=$1 cur=$2
    if [[ $cur == -* ]]; then
        _locklab_words "--help" "$cur"
    elif ((cword == 2)); then
        _locklab_words "algorithms scenarios workloads faults servers" "$cur"
    fi
}

_locklab()
{
    local cword=$COMP_CWORD cur=${COMP_WORDS[COMP_CWORD]-} prev=${COMP_WORDS[COMP_CWORD - 1]-}
    local bin=${COMP_WORDS[0]/#\~/$HOME} cmd=${COMP_WORDS[1]-}
    local run_opts="--clients -c --duration -d --requests -n --seed -s --out -o --quiet -q
        --show-violations --redis -r --zookeeper -z --etcd --postgres --sentinel --csv --json
        --percentiles --help"
    # `--algorithm=re` reaches us as three words, "=" being a word break
    if [[ $cur == = ]]; then
        cur=""
    elif [[ $prev == = ]] && ((cword > 2)); then
        prev=${COMP_WORDS[cword - 2]}
    fi
    COMPREPLY=()
    if ((cword == 1)); then
        _locklab_words "run compare matrix scorecard check cluster list show history help --help --version" "$cur"
        return 0
    fi
    _locklab_option_value "$bin" "$prev" "$cur" && return 0
    case $cmd in
    run | compare | show)
        if [[ $cur == -* ]]; then
            case $cmd in
            run) _locklab_words "--algorithm -a $run_opts" "$cur" ;;
            compare) _locklab_words "--algorithms -A --seeds $run_opts" "$cur" ;;
            show) _locklab_words "--algorithm -a --clients -c --duration -d --requests -n
                --seed -s --redis -r --zookeeper -z --etcd --postgres --sentinel --json --help" "$cur" ;;
            esac
        else
            _locklab_paths "$cur" "*.json"
        fi ;;
    matrix)
        if [[ $cur == -* ]]; then
            _locklab_words "--seeds --only --out -o --quiet -q --csv --json --percentiles --help" "$cur"
        else
            _locklab_paths "$cur"
        fi ;;
    scorecard)
        [[ $cur == -* ]] && _locklab_words "--suite --scenario --algorithms -A --no-fenced-rows
            --classes --only --plan --seeds --duration -d --require-safe --out -o --quiet -q
            --csv --json --junit --help" "$cur" ;;
    check)
        if [[ $cur == -* ]]; then
            _locklab_words "--expect --show-violations --help" "$cur"
        else
            _locklab_paths "$cur" "*.jsonl"
        fi ;;
    history)
        if [[ $cur == -* ]]; then
            _locklab_words "--out -o --help" "$cur"
        else
            _locklab_paths "$cur"
        fi ;;
    cluster) _locklab_cluster "$cword" "$cur" ;;
    list) _locklab_list "$cword" "$cur" ;;
    help)
        if [[ $cur == -* ]]; then
            _locklab_words "--help" "$cur"
        elif ((cword == 2)); then
            _locklab_words "run compare matrix scorecard check cluster list show history" "$cur"
        fi ;;
    esac
    return 0
}

complete -F _locklab locklab build/locklab ./build/locklab
