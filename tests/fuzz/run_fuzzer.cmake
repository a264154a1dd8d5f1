# Runs one libFuzzer target for SECONDS on a scratch copy of its seed corpus (cmake -P).
# Variables: FUZZER, SEEDS, WORK, SECONDS. A crash, leak, sanitizer report or timeout fails it.
# A fixed seed: a finding in CI replays with the same binary (longer campaigns use random seeds).
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/corpus" "${WORK}/artifacts")
if(EXISTS "${SEEDS}")
  file(GLOB _seeds "${SEEDS}/*")
  if(_seeds)
    file(COPY ${_seeds} DESTINATION "${WORK}/corpus")
  endif()
endif()
execute_process(
  COMMAND "${FUZZER}" -seed=1 -max_total_time=${SECONDS} -timeout=10 -rss_limit_mb=2048
          -print_final_stats=1 -artifact_prefix=${WORK}/artifacts/ "${WORK}/corpus"
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(GLOB _found "${WORK}/artifacts/*")
  message(FATAL_ERROR "fuzzer ${FUZZER} failed (exit ${rc}); reproducers: ${_found}")
endif()
