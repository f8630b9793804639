# Downloads in the test scripts (scripts/test, scripts/vscode-test), made to
# survive a flaky network: a CI run once failed because one read from PyPI
# timed out mid-wheel, and pip retries a refused connection but not a read
# that stalls halfway. Sourced, not run.

# Extra patience for pip and npm themselves: longer socket timeouts and more
# retries of the requests they do retry.
export PIP_DEFAULT_TIMEOUT="${PIP_DEFAULT_TIMEOUT:-60}"
export PIP_RETRIES="${PIP_RETRIES:-8}"
export npm_config_fetch_retries="${npm_config_fetch_retries:-5}"
export npm_config_fetch_retry_mintimeout="${npm_config_fetch_retry_mintimeout:-10000}"
export npm_config_fetch_retry_maxtimeout="${npm_config_fetch_retry_maxtimeout:-120000}"

# with_retries WHAT COMMAND...: runs COMMAND up to four times, waiting 15,
# 45 and 90 s between tries, and says each time why it tries again. Only for
# commands that can safely run twice (every install here starts from
# scratch or is idempotent).
with_retries() {
  local what="$1"
  shift
  local waits=(15 45 90) try=1
  until "$@"; do
    if ((try > ${#waits[@]})); then
      echo "$what: failed $try times; giving up" >&2
      return 1
    fi
    echo "$what: failed (try $try of $((${#waits[@]} + 1))); trying again in ${waits[try - 1]} s" >&2
    sleep "${waits[try - 1]}"
    try=$((try + 1))
  done
}
