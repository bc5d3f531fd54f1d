# The spare bash's start-up file (BASH_ENV; tools/spare.py). The spare is `bash -c PLACEHOLDER`:
# bash has done its own start and waits here until the runtime has written the call's command
# over the placeholder in its argv and sent the command on stdin with \x1f after it (a runtime
# that died before that leaves no \x1f: nothing runs). Then this file puts back what bash -c
# COMMAND would have at its first line, and bash runs the command as its -c string.
IFS= read -r -N 2147483647 BASH_EXECUTION_STRING
[[ $BASH_EXECUTION_STRING == *$'\x1f' ]] || exit 125
BASH_EXECUTION_STRING=${BASH_EXECUTION_STRING%?}
exec 0</dev/null
unset -v BASH_ENV PIPESTATUS
SECONDS=0
: "$0"
