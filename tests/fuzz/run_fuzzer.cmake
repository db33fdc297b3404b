# Runs one fuzz target for a bounded time (cmake -P, from tests/fuzz/CMakeLists.txt):
# a fresh work corpus in the build folder first (libFuzzer writes new units there), the
# committed seeds second (only read), crash inputs into ARTIFACT_DIR. Fails when the
# fuzzer reports a finding. The budgets of #31: no input may take more than 1 s or
# allocate more than 512 MB at once (the process's RSS limit stays above the sanitizers'
# own shadow memory and quarantine).
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}" "${ARTIFACT_DIR}")
execute_process(
    COMMAND "${FUZZER}" -max_total_time=${SECONDS} -timeout=1 -malloc_limit_mb=512 -rss_limit_mb=2048
            -print_final_stats=1
            "-artifact_prefix=${ARTIFACT_DIR}/" "${WORK_DIR}" "${SEED_DIR}"
    RESULT_VARIABLE status)
if(NOT status EQUAL 0)
    message(FATAL_ERROR "${FUZZER} found a problem (exit ${status}); the input is in ${ARTIFACT_DIR}/")
endif()
