#!/bin/bash
# complete.sh COMPLETION_FILE 'cctrace run --ti': what Tab offers at the end
# of the line, one candidate a line, as bash-completion computes it.  Words
# are split at blanks only (no quoting, no '=' or ':' in the line).
set -u
. /usr/share/bash-completion/bash_completion || exit 2
. "$1" || exit 2
compopt() { :; } # works only inside a completion bash itself started
line=$2
read -ra COMP_WORDS <<<"$line"
[[ $line == *' ' ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMP_LINE=$line
COMP_POINT=${#line}
COMPREPLY=()
_cctrace cctrace "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
printf '%s\n' "${COMPREPLY[@]}"
