# bash completion for cctrace(1)                          -*- shell-script -*-
#
# Installed as share/bash-completion/completions/cctrace, where
# bash-completion loads it on the first Tab after `cctrace`; its helpers
# (_init_completion, _filedir) are therefore at hand.
#
# The subcommands and their options are read from the cctrace being
# completed (`cctrace --help`, `cctrace CMD --help`), so that this file does
# not repeat, and fall out of step with, the option tables of cli/: an
# option listed with an upper-case word after it (`--timeout DURATION`)
# takes an argument.  What an argument is (a file, a directory, an outcome,
# a strategy, a typestate model) is the one thing known here.  After `-- PROGRAM`, a word
# completes as a file or as one of the program's functions (read with nm),
# the names a schedule for it is written with.

# Prints the options of `$1 $2 --help`, one a line: the option (--long or
# -s), a blank, and 1 if it takes an argument, 0 if not.  Cached per cctrace
# and command.
_cctrace_options()
{
    local key="$1 $2" line arg
    if [[ ${_cctrace_cache_key-} != "$key" ]]; then
        _cctrace_cache_key=$key
        _cctrace_cache_opts=$(
            "$1" ${2:+"$2"} --help 2>&1 | while IFS= read -r line; do
                [[ $line =~ ^[[:space:]]+(-[a-zA-Z],[[:space:]]+)?(--[a-z][a-z0-9-]*)([[:space:]=]+([A-Z][A-Z/_]*))? ]] || continue
                arg=0
                [[ -n ${BASH_REMATCH[4]} ]] && arg=1
                printf '%s %s\n' "${BASH_REMATCH[2]}" $arg
                [[ -n ${BASH_REMATCH[1]} ]] && printf '%s %s\n' "${BASH_REMATCH[1]%%,*}" $arg
            done
        )
    fi
    printf '%s\n' "$_cctrace_cache_opts"
}

# The subcommands `cctrace --help` lists (its usage lines).
_cctrace_commands()
{
    "$1" --help 2>&1 | sed -n 's/^\(usage:\)\{0,1\}[[:space:]]*cctrace \([a-z][a-z-]*\).*/\2/p' | sort -u
}

# Function names defined in program $1 (a path, or a command on $PATH):
# its symbol table, or the dynamic one if it is stripped.  The C runtime's
# own (_start, frame_dummy...) are left out unless $2 asks for a leading _.
_cctrace_functions()
{
    local prog=$1 syms
    [[ $prog == */* ]] || prog=$(type -P -- "$prog") || return 0
    [[ -f $prog && -r $prog ]] || return 0
    syms=$(nm --defined-only -- "$prog" 2>/dev/null)
    [[ -n $syms ]] || syms=$(nm -D --defined-only -- "$prog" 2>/dev/null)
    awk -v under="${2:0:1}" '$2 ~ /^[Tti]$/ {
        sub(/@.*/, "", $3)
        if (under != "_" && ($3 ~ /^_/ || $3 ~ /^(de)?register_tm_clones$|^frame_dummy$/))
            next
        print $3
    }' <<<"$syms" | sort -u
}

# Process ids, from /proc (procps's ps may not be installed).
_cctrace_pids()
{
    local pids=(/proc/[0-9]*)
    COMPREPLY=($(compgen -W "${pids[*]#/proc/}" -- "$cur"))
}

# Completes the argument of option $1 of command $3.
_cctrace_option_argument()
{
    local cur=$2 cmd=$3
    case $1 in
    --expect)
        COMPREPLY=($(compgen -W 'bug completed unrealizable error infeasible' -- "$cur")) ;;
    --watchpoints)
        COMPREPLY=($(compgen -W 'auto hw sw' -- "$cur")) ;;
    --strategy)
        # As `cctrace explore --help` lists them: dfs, bfs, random[:C],
        # pct:D[:C], cb:N, vb:V[:T], pctvb:D[:V], ipb, idb, ib:K.
        COMPREPLY=($(compgen -W 'dfs bfs random random: pct: cb: vb: pctvb: ipb idb ib:' -- "$cur"))
        [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *: ]] && compopt -o nospace
        __ltrim_colon_completions "$cur" ;;
    --points)
        COMPREPLY=($(compgen -W 'shared sync all' -- "$cur")) ;;
    --model)
        # Built-in models and model files (FILE.ts), separated by commas.
        local prefix=
        [[ $cur == *,* ]] && prefix=${cur%,*},
        COMPREPLY=($(compgen -P "$prefix" -W 'file lock memory' -- "${cur##*,}"))
        local files=($(compgen -f -- "$cur"))
        COMPREPLY+=("${files[@]}")
        compopt -o filenames -o nospace 2>/dev/null ;;
    --out | -o)
        # run and attach write the trace to a FILE; explore, test and
        # typestate write their files into a DIR.
        if [[ $cmd == @(run|attach) ]]; then
            _filedir
        else
            _filedir -d
        fi ;;
    --driver)
        COMPREPLY=($(compgen -c -- "$cur")) ;;
    --timeout | --time | --runs | --instances | --seed | --shard | --jobs | -j | --minimize | --minimize-time | --max-steps | --ok-exit) ;;
    *)
        _filedir ;;
    esac
}

# Completes a word after `-- PROGRAM`: the program itself, or its arguments.
_cctrace_program()
{
    local cur=$1 prog=$2
    if [[ -z $prog ]]; then
        if [[ $cur == */* ]]; then
            _filedir
        else
            COMPREPLY=($(compgen -c -- "$cur"))
        fi
        return
    fi
    _filedir
    [[ $cur == */* ]] && return
    COMPREPLY+=($(compgen -W "$(_cctrace_functions "$prog" "$cur")" -- "$cur"))
}

_cctrace()
{
    local cur prev words cword split
    _init_completion -s -n : || return

    local self=${words[0]} cmd=${words[1]-} i w table opts operands=0 dashdash=0
    __expand_tilde_by_ref self # ~/bin/cctrace: run it to read its --help
    if ((cword == 1)); then
        COMPREPLY=($(compgen -W "$(_cctrace_commands "$self") --help -h --version" -- "$cur"))
        return
    fi
    table=$(_cctrace_options "$self" "$cmd")
    # What Tab offers: long options that take an argument end in "=".
    opts=$(awk '{ print $1 ($2 && $1 ~ /^--/ ? "=" : "") }' <<<"$table")

    # Walk the words before the cursor: options (and their arguments),
    # operands, and where `--` is.
    for ((i = 2; i < cword; i++)); do
        w=${words[i]}
        if ((dashdash)); then
            continue
        elif [[ $w == -- ]]; then
            dashdash=$i
        elif [[ $w == -* && $w != *=* ]]; then
            grep -qx -- "$w 1" <<<"$table" && ((i++))
        elif [[ $w != -* ]]; then
            ((operands++))
        fi
    done

    if ((dashdash)); then
        if ((cword == dashdash + 1)); then
            _cctrace_program "$cur" ""
        else
            _cctrace_program "$cur" "${words[dashdash + 1]}"
        fi
        return
    fi
    if [[ $prev == -* ]] && grep -qx -- "$prev 1" <<<"$table"; then
        _cctrace_option_argument "$prev" "$cur" "$cmd"
        return
    fi
    if [[ $cur == -* ]]; then
        [[ $cmd == @(run|explore|test|shell|typestate) ]] && opts+=$'\n--'
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
        [[ ${COMPREPLY-} == *= ]] && compopt -o nospace
        return
    fi
    case $cmd in
    run | explore)
        ((operands == 0)) && _filedir ;;
    attach)
        if ((operands == 0)); then
            _cctrace_pids
        elif ((operands == 1)); then
            _filedir
        fi ;;
    shell)
        ((operands == 0)) && _cctrace_pids ;;
    help)
        ((operands == 0)) && COMPREPLY=($(compgen -W "$(_cctrace_commands "$self")" -- "$cur")) ;;
    esac
}
complete -F _cctrace cctrace

# ex: filetype=sh
