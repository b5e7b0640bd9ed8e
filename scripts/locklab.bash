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

# `locklab help [CMD]` now: the commands, their options and what each
# option takes are read from it, never typed here, so a new command, option
# or server kind completes as the binary that has it prints it.
_locklab_help()
{
    timeout 2 "$1" help ${2:+"$2"} 2>/dev/null
}

# The commands: the first word of each line under "commands:".
_locklab_commands()
{
    local line on=0
    while IFS= read -r line; do
        if [[ $line == commands: ]]; then
            on=1
        elif ((on)) && [[ -z $line ]]; then
            break
        elif ((on)) && [[ $line =~ ^\ \ ([a-z]+)\  ]]; then
            printf '%s\n' "${BASH_REMATCH[1]}"
        fi
    done < <(_locklab_help "$1")
}

# An option line of a help text: "  -a, --algorithm NAME   text" or
# "      --proxy   text"; sets short, long, arg (its metavariable) and text.
_locklab_option_line()
{
    [[ $1 =~ ^\ \ (-[A-Za-z],\ |\ \ \ \ )(--[a-z][a-z0-9-]*)(\ [^\ ][^\ ]*)?(\ +(.*))?$ ]] || return 1
    short=${BASH_REMATCH[1]%, }
    short=${short// /}
    long=${BASH_REMATCH[2]}
    arg=${BASH_REMATCH[3]# }
    text=${BASH_REMATCH[5]}
}

# Every option of CMD: its option lines, and the options its usage names.
# With ACTION (cluster's up, status, down), only those of that action's usage.
_locklab_options()
{
    local bin=$1 cmd=$2 action=${3-} line short long arg text in_usage=1 mine=1
    while IFS= read -r line; do
        [[ -z $line ]] && in_usage=0
        if ((in_usage)); then
            [[ -n $action && $line == *"locklab $cmd "* ]] && mine=0
            [[ -n $action && $line == *"locklab $cmd $action"* ]] && mine=1
            ((mine)) && grep -oE -- '--[a-z][a-z0-9-]*' <<<"$line"
        elif [[ -z $action ]] && _locklab_option_line "$line"; then
            printf '%s\n' "$long"
            [[ -n $short ]] && printf '%s\n' "$short"
        fi
    done < <(_locklab_help "$bin" "$cmd")
    printf '%s\n' --help
}

# The values a count option takes, from its text: "0, 1 or 3 (default 1)",
# "0..8 (default 5)"; nothing for a range too wide to list.
_locklab_counts()
{
    local text=$1 i
    if [[ $text =~ ^([0-9]+)\.\.([0-9]+)([^0-9]|$) ]]; then
        ((BASH_REMATCH[2] - BASH_REMATCH[1] <= 10)) || return 0
        for ((i = BASH_REMATCH[1]; i <= BASH_REMATCH[2]; i++)); do printf '%s ' "$i"; done
    elif [[ $text =~ ^([0-9]+(,\ [0-9]+)*\ or\ [0-9]+)([^0-9]|$) ]]; then
        local words=${BASH_REMATCH[1]//,/}
        printf '%s' "${words// or / }"
    fi
}

# The help line of CMD's option opt; sets short, long, arg and text.
_locklab_option_help()
{
    local line
    while IFS= read -r line; do
        _locklab_option_line "$line" && [[ $2 == "$long" || $2 == "$short" ]] && return 0
    done < <(_locklab_help "$1" "$3")
    return 1
}

# The value of an option that takes one: the options whose values are
# names or files by their spelling (the command line's own, kept as users
# type them), any other by its help line (a metavariable, and for a count
# the values its text lists); returns 1 when prev takes none.
_locklab_option_value()
{
    local bin=$1 cmd=$2 prev=$3 cur=$4 short long arg text
    case $prev in
    -a | --algorithm) _locklab_words "$(_locklab_names "$bin" algorithms)" "$cur" ;;
    -A | --algorithms) _locklab_algorithm_list "$bin" "$cur" ;;
    -o | --out | --dir | --junit) _locklab_paths "$cur" ;;
    --suite) _locklab_words "$(_locklab_names "$bin" suites)" "$cur"
        [[ $cur == */* || $cur == .* ]] && _locklab_paths "$cur" "*.json" ;;
    --scenario) _locklab_paths "$cur" "*.json" ;;
    --json) [[ $cmd == show ]] && return 1; _locklab_paths "$cur" ;;
    --percentiles) _locklab_words "50,90,99,99.9,100 50,99,99.9,99.99" "$cur" ;;
    -*)
        _locklab_option_help "$bin" "$prev" "$cmd" && [[ -n $arg ]] || return 1
        _locklab_words "$(_locklab_counts "$text")" "$cur" ;;
    *) return 1 ;;
    esac
    return 0
}

# list [KIND]: one kind at most, of those its usage names.
_locklab_list()
{
    local bin=$1 cword=$2 cur=$3 usage
    if [[ $cur == -* ]]; then
        _locklab_words "--help" "$cur"
    elif ((cword == 2)); then
        usage=$(_locklab_help "$bin" list | grep -oE '\[[a-z|]+\]' | head -n 1)
        usage=${usage//[\[\]]/}
        _locklab_words "${usage//|/ }" "$cur"
    fi
}

# The words of the usage lines: the actions a command takes (cluster's).
_locklab_actions()
{
    _locklab_help "$1" "$2" | grep -oE "locklab $2 [a-z]+" | awk '{print $3}' | sort -u
}

# What a command's word at cword is: an option, a file, an action.
_locklab_command_word()
{
    local bin=$1 cmd=$2 cword=$3 cur=$4
    case $cmd in
    cluster)
        if ((cword == 2)) && [[ $cur != -* ]]; then
            _locklab_words "$(_locklab_actions "$bin" cluster)" "$cur"
        elif ((cword == 2)); then
            _locklab_words "--help" "$cur"
        else
            _locklab_words "$(_locklab_options "$bin" cluster "${COMP_WORDS[2]-}")" "$cur"
        fi ;;
    list) _locklab_list "$bin" "$cword" "$cur" ;;
    help)
        if [[ $cur == -* ]]; then
            _locklab_words "--help" "$cur"
        elif ((cword == 2)); then
            _locklab_words "$(_locklab_commands "$bin" | grep -vx help)" "$cur"
        fi ;;
    *)
        if [[ $cur == -* ]]; then
            _locklab_words "$(_locklab_options "$bin" "$cmd")" "$cur"
        else
            case $cmd in
            run | compare | show) _locklab_paths "$cur" "*.json" ;;
            check) _locklab_paths "$cur" "*.jsonl" ;;
            matrix | history) _locklab_paths "$cur" ;;
            esac
        fi ;;
    esac
}

_locklab()
{
    local cword=$COMP_CWORD cur=${COMP_WORDS[COMP_CWORD]-} prev=${COMP_WORDS[COMP_CWORD - 1]-}
    local bin=${COMP_WORDS[0]/#\~/$HOME} cmd=${COMP_WORDS[1]-}
    # `--algorithm=re` reaches us as three words, "=" being a word break
    if [[ $cur == = ]]; then
        cur=""
    elif [[ $prev == = ]] && ((cword > 2)); then
        prev=${COMP_WORDS[cword - 2]}
    fi
    COMPREPLY=()
    if ((cword == 1)); then
        _locklab_words "$(_locklab_commands "$bin") --help --version" "$cur"
        return 0
    fi
    _locklab_option_value "$bin" "$cmd" "$prev" "$cur" && return 0
    _locklab_command_word "$bin" "$cmd" "$cword" "$cur"
    return 0
}

complete -F _locklab locklab build/locklab ./build/locklab
